package importer

import (
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/wlcdev/wlc/internal/engine/cmdline"
	"github.com/wlcdev/wlc/internal/engine/sglang"
)

// sglang converts perf-eval's sglang: server block (the SGLang branch):
// model, image, env and serve_args, which perf-eval appended word-split to
// `python3 -m sglang.launch_server --model-path <model> --host 0.0.0.0
// --port <port>`. Options cmdline.SGLangServe types become sglang: fields
// (as launch_server's own parser reads them: --tp is --tp-size); the rest
// stay in sglang.extra_args, in order.
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
	if _, errs := sglang.LaunchServer.Parse(toks); len(errs) > 0 {
		for _, e := range errs {
			c.warnf(f.val, "sglang.serve_args", "%s would refuse %q: %s; kept in extra_args for wlc vet to report", sglang.LaunchServer.Prog, toks[e.Index], e.Msg)
		}
	}
	p := cmdline.SGLangServe.Parse(toks)
	for _, u := range p.Units {
		if u.IsOption && u.Match.Flag != nil && u.Match.Flag.Owner != "" {
			c.errorf(f.val, "sglang.serve_args", "%s is set by %s in wlc (perf-eval set it too, so the later flag won); remove it", toks[u.Start], u.Match.Flag.Owner)
		}
	}
	// In argv order: p.Errs is a map, and its order is random.
	bad := slices.Sorted(maps.Keys(p.Errs))
	for _, i := range bad {
		c.warnf(f.val, "sglang.serve_args", "%s: %v; kept in extra_args", strings.Join(toks[p.Units[i].Start:p.Units[i].End], " "), p.Errs[i])
	}
	var lines []string
	ints := map[string]int{}
	for _, fl := range cmdline.SGLangServe.Flags {
		v, ok := p.Values[fl.Field]
		if fl.Field == "" || !ok {
			continue
		}
		lit := cmdline.Token(v)
		switch x := v.(type) {
		case string:
			lit = quote(x)
		case int:
			ints[fl.Field] = x
		}
		lines = append(lines, label(strings.TrimPrefix(fl.Field, "sglang."))+": "+lit)
	}
	rest := p.Rest
	for _, i := range bad {
		rest = append(rest, toks[p.Units[i].Start:p.Units[i].End]...)
	}
	if len(rest) > 0 {
		q := make([]string, len(rest))
		for i, r := range rest {
			q[i] = quote(r)
		}
		lines = append(lines, "extra_args: ["+strings.Join(q, ", ")+"]")
	}
	if len(lines) > 0 {
		w.add(nodeComments(f), block("sglang", lines))
	}
	typed := p.Values
	// SGLang's GPUs: tp × pp, times dp unless DP attention shares them.
	used := orOne(ints["sglang.tp_size"]) * orOne(ints["sglang.pp_size"])
	if typed["sglang.enable_dp_attention"] != true {
		used *= orOne(ints["sglang.dp_size"])
	}
	if !w.gpusRefused && w.gpus > 0 && used != w.gpus {
		var at *yaml.Node
		if w.gpusAt != nil {
			at = w.gpusAt.val
		}
		c.warnf(at, "num_gpus", "the job reserves %d GPUs but the SGLang server uses %d (tp × pp, × dp without DP attention); imported as is, and wlc vet will refuse it", w.gpus, used)
	}
}
