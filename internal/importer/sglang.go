package importer

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/wlcdev/wlc/internal/sglang"
)

// sglang converts perf-eval's sglang: server block (the SGLang branch):
// model, image, env and serve_args, which perf-eval appended word-split to
// `python3 -m sglang.launch_server --model-path <model> --host 0.0.0.0
// --port <port>`. Options internal/sglang types become sglang: fields (as
// launch_server's own parser reads them: --tp is --tp-size); the rest stay
// in sglang.extra_args, in order.
func (c *conv) sglang(w *workload, top map[string]field) {
	sf := top["sglang"]
	if vf, both := top["vllm"]; both {
		c.errorf(vf.key, "vllm", "define only one of vllm: or sglang: (perf-eval refused both)")
		return
	}
	if sf.val.Kind != yaml.MappingNode {
		c.errorf(sf.val, "sglang", "sglang (with model and serve_args) must be a mapping")
		return
	}
	fs, by := c.fields(sf.val, "sglang")
	for _, f := range fs {
		switch k := f.key.Value; k {
		case "model", "image", "env", "serve_args":
		default:
			c.warnf(f.key, "sglang."+k, "unknown key sglang.%s (perf-eval ignored it); kept as a TODO comment, not converted", k)
			w.todo = append(w.todo, "sglang."+yamlText(f))
		}
	}
	w.add(nil, `engine: "sglang"`)
	model := ""
	if f, ok := by["model"]; !ok || f.val.Kind != yaml.ScalarNode || f.val.Value == "" {
		c.errorf(sf.key, "sglang.model", "sglang.model is required")
	} else {
		model = f.val.Value
		w.add(nodeComments(f), "model: "+quote(model))
	}
	c.precision(w, model, by["model"].val, top)
	if f, ok := by["image"]; ok {
		w.add(nodeComments(f), "image: "+quote(f.val.Value))
	}
	if f, ok := by["env"]; ok {
		c.env(w, f, "sglang")
	}
	f, ok := by["serve_args"]
	if !ok {
		return
	}
	if f.val.Kind != yaml.ScalarNode || (f.val.Tag != "!!str" && f.val.Tag != "!!null") {
		c.errorf(f.val, "sglang.serve_args", "serve_args must be a string (perf-eval word-split it)")
		return
	}
	toks := SplitServeArgs(f.val.Value)
	args, errs := sglang.LaunchServer.Parse(toks)
	typed := map[string]string{}
	ints := map[string]int{}
	inTyped := map[int]bool{} // token indices a typed field took
	for _, a := range args {
		t, ok := sglang.ByOption(a.Option)
		if !ok {
			if owner, own := sglang.Owned[a.Option.Name()]; own {
				c.errorf(f.val, "sglang.serve_args", "%s is set by %s in wlc (perf-eval set it too, so the later flag won); remove it", a.Token, owner)
			}
			continue
		}
		v := "true"
		if len(a.Values) > 0 {
			v = a.Values[0]
		}
		switch a.Option.Kind {
		case sglang.Int:
			var n int
			fmt.Sscan(v, &n)
			ints[t.Field] = n
		case sglang.Flag, sglang.Float:
		default:
			v = quote(v)
		}
		if _, dup := typed[t.Field]; dup {
			c.warnf(f.val, "sglang.serve_args", "%s is given twice; SGLang kept the last value, and so does the import", t.Flag)
		}
		typed[t.Field] = v
		inTyped[a.Index] = true
		if len(a.Values) > 0 && !strings.Contains(a.Token, "=") {
			inTyped[a.Index+1] = true
		}
	}
	for _, e := range errs {
		c.warnf(f.val, "sglang.serve_args", "%s would refuse %q: %s; kept in extra_args for wlc vet to report", sglang.LaunchServer.Prog, toks[e.Index], e.Msg)
	}
	var lines []string
	for _, t := range sglang.TypedOptions {
		if v, ok := typed[t.Field]; ok {
			lines = append(lines, label(t.Field)+": "+v)
		}
	}
	var rest []string
	for i, tok := range toks {
		if !inTyped[i] {
			rest = append(rest, quote(tok))
		}
	}
	if len(rest) > 0 {
		lines = append(lines, "extra_args: ["+strings.Join(rest, ", ")+"]")
	}
	if len(lines) > 0 {
		w.add(nodeComments(f), block("sglang", lines))
	}
	// SGLang's GPUs: tp × pp, times dp unless DP attention shares them.
	used := orOne(ints["tp_size"]) * orOne(ints["pp_size"])
	if typed["enable_dp_attention"] != "true" {
		used *= orOne(ints["dp_size"])
	}
	if w.gpus > 0 && used != w.gpus {
		var at *yaml.Node
		if w.gpusAt != nil {
			at = w.gpusAt.val
		}
		c.warnf(at, "num_gpus", "the job reserves %d GPUs but the SGLang server uses %d (tp × pp, × dp without DP attention); imported as is, and wlc vet will refuse it", w.gpus, used)
	}
}
