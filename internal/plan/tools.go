package plan

import (
	"slices"
	"strings"

	"github.com/wlcdev/wlc/schema"
)

// Tool is a client program a workload's steps need where the clients run
// (beside the server: the vLLM container, the pod, the Pyxis container).
// The job checks that its Modules import before the server starts and,
// unless the profile says the image ships it, installs Packages first.
type Tool struct {
	// Name is a #ClientTool: lm_eval, bfcl or speed_bench.
	Name string `json:"name"`
	// For says which steps need it.
	For string `json:"for"`
	// Modules must import with the python3 the clients run.
	Modules []string `json:"modules"`
	// Packages are the pip requirements that provide Modules.
	Packages []string `json:"packages"`
	// InImage is set when the profile lists the tool in image_tools: the
	// job checks it and installs nothing.
	InImage bool `json:"in_image,omitempty"`
}

// clientTools says what each #ClientTool is made of, the packages
// perf-eval installed for it: lm-eval with the API extra its
// local-completions model needs, bfcl-eval (with soundfile, which
// perf-eval added beside it), and the SPEED-Bench preparation's imports.
var clientTools = map[string]struct{ modules, packages []string }{
	"lm_eval":     {[]string{"lm_eval", "aiohttp", "tenacity", "tiktoken", "requests"}, []string{"lm-eval[api]"}},
	"bfcl":        {[]string{"bfcl_eval", "soundfile"}, []string{"bfcl-eval", "soundfile"}},
	"speed_bench": {[]string{"datasets", "numpy", "pandas", "tiktoken"}, []string{"datasets", "numpy", "pandas", "tiktoken"}},
}

// ClientToolNames are the tools wlc knows, sorted (schema's #ClientTool).
func ClientToolNames() []string {
	var out []string
	for k := range clientTools {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// tools lists what p's steps need, in the order the steps run.
func tools(p Workload, prof schema.Profile) []Tool {
	var out []Tool
	add := func(name, why string) {
		ct := clientTools[name]
		out = append(out, Tool{Name: name, For: why, Modules: ct.modules, Packages: ct.packages,
			InImage: slices.Contains(prof.ImageTools, name)})
	}
	if len(p.Datasets) > 0 {
		var subsets []string
		for _, d := range p.Datasets {
			subsets = append(subsets, d.Name)
		}
		add("speed_bench", "preparing "+strings.Join(subsets, ", "))
	}
	if len(p.LMEval) > 0 {
		var ts []string
		for _, t := range p.LMEval {
			ts = append(ts, t.Task)
		}
		add("lm_eval", "lm_eval "+strings.Join(ts, ", "))
	}
	if len(p.BFCL) > 0 {
		var cs []string
		for _, b := range p.BFCL {
			cs = append(cs, b.Category)
		}
		add("bfcl", "bfcl "+strings.Join(cs, ", "))
	}
	return out
}
