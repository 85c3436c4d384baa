package importer

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

func (c *conv) vllm(w *workload, top map[string]field) {
	vf, ok := top["vllm"]
	if !ok || vf.val.Kind != yaml.MappingNode {
		c.errorf(vf.val, "vllm", "vllm (with model and serve_args) is required")
		return
	}
	fs, by := c.fields(vf.val, "vllm")
	for _, f := range fs {
		k := f.key.Value
		if why, ok := unsupportedVLLM[k]; ok {
			c.errorf(f.key, "vllm."+k, "%s; workload not imported", why)
			continue
		}
		switch k {
		case "model", "image", "pin_image", "env", "serve_args", "startup_timeout_s", "attention_backends", "moe_backends":
		case "startup_timeout":
			c.warnf(f.key, "vllm."+k, "vllm.startup_timeout is the B300 branch's name; main-line perf-eval ignored it (its field is startup_timeout_s); kept as a TODO comment, not converted")
			w.todo = append(w.todo, "vllm."+yamlText(f))
		default:
			c.warnf(f.key, "vllm."+k, "unknown key vllm.%s (perf-eval ignored it); kept as a TODO comment, not converted", k)
			w.todo = append(w.todo, "vllm."+yamlText(f))
		}
	}
	model := ""
	if f, ok := by["model"]; !ok || f.val.Kind != yaml.ScalarNode || f.val.Value == "" {
		c.errorf(vf.key, "vllm.model", "vllm.model is required")
	} else {
		model = f.val.Value
		w.add(nodeComments(f), "model: "+quote(model))
	}
	c.precision(w, model, by["model"].val, top)
	if f, ok := by["image"]; ok {
		w.add(nodeComments(f), "image: "+quote(f.val.Value))
	}
	if f, ok := by["pin_image"]; ok {
		on := f.val.Tag == "!!bool" && isTrue(f.val.Value)
		if f.val.Tag != "!!bool" {
			c.warnf(f.val, "vllm.pin_image", "pin_image is %q, not a boolean: perf-eval ignored it, so pin_image: false", f.val.Value)
		}
		if on {
			if _, img := by["image"]; !img {
				c.warnf(f.val, "vllm.pin_image", "pin_image without image had no effect in perf-eval; dropped")
			} else {
				w.add(nodeComments(f), "pin_image: true")
			}
		}
	}
	if f, ok := by["env"]; ok {
		c.env(w, f, "vllm")
	}
	if f, ok := by["startup_timeout_s"]; ok {
		if n, ok := c.intVal(f, "vllm.startup_timeout_s"); ok {
			w.add(nodeComments(f), fmt.Sprintf("startup_timeout_s: %d", n))
		}
	}
	var s *serveState
	var cs []string
	if f, ok := by["serve_args"]; ok {
		if f.val.Kind != yaml.ScalarNode || (f.val.Tag != "!!str" && f.val.Tag != "!!null") {
			c.errorf(f.val, "vllm.serve_args", "serve_args must be a string (perf-eval word-split it)")
			return
		}
		s = c.serveArgs(f.val)
		cs = nodeComments(f)
	} else {
		s = &serveState{ints: map[string]int{}}
	}
	tp, dp, pp := orOne(s.ints["tensor_parallel_size"]), orOne(s.ints["data_parallel_size"]), orOne(s.ints["pipeline_parallel_size"])
	_, job := top["custom_script"]
	if _, pd := top["serving"]; !pd && !job && !w.gpusRefused && w.gpus > 0 && tp*dp*pp != w.gpus {
		var at *yaml.Node
		if w.gpusAt != nil {
			at = w.gpusAt.val
		}
		used := tp * dp * pp
		if used < w.gpus {
			// perf-eval held the whole reservation (a pod or host taken
			// whole); wlc says so explicitly, and the reason is the user's.
			c.warnf(at, "num_gpus", "the job reserves %d GPUs but TP × DP × PP = %d × %d × %d = %d (perf-eval left the rest idle); imported with idle_gpus: {count: %d} and a TODO reason: say why the job holds them, or make gpus_per_node %d", w.gpus, tp, dp, pp, used, w.gpus-used, used)
			w.add([]string{"TODO(import): say why the job holds GPUs the server does not use, or reserve only the server's."},
				fmt.Sprintf("idle_gpus: {count: %d, reason: %s}", w.gpus-used, quote(fmt.Sprintf("perf-eval reserved %d GPUs for this TP×DP×PP = %d server", w.gpus, used))))
		} else {
			c.warnf(at, "num_gpus", "the job reserves %d GPUs but TP × DP × PP = %d × %d × %d = %d; imported as is, and wlc vet will refuse it: make gpus_per_node %d or change the parallel sizes", w.gpus, tp, dp, pp, used, used)
		}
	}
	lines := s.lines()
	if len(lines) > 0 {
		w.add(cs, "serve: {\n"+strings.Join(lines, "\n")+"\n}")
	}
	c.backendSweep(w, by)
}

// backendSweep maps #29's vllm.attention_backends / vllm.moe_backends to
// backend_sweep. MoE names are lower-cased as vLLM reads them (AITER is
// aiter); an attention backend vLLM does not know is kept for wlc vet to
// name.
func (c *conv) backendSweep(w *workload, by map[string]field) {
	var lines []string
	for _, k := range []struct{ yaml, cue string }{{"attention_backends", "attention"}, {"moe_backends", "moe"}} {
		f, ok := by[k.yaml]
		if !ok {
			continue
		}
		if f.val.Kind != yaml.SequenceNode || len(f.val.Content) == 0 {
			c.errorf(f.val, "vllm."+k.yaml, "vllm.%s must be a non-empty list of backend names (perf-eval refused anything else)", k.yaml)
			continue
		}
		var names []string
		for _, n := range f.val.Content {
			n = resolve(n)
			if n.Kind != yaml.ScalarNode || n.Value == "" {
				c.errorf(n, "vllm."+k.yaml, "a backend name must be a string")
				continue
			}
			v := n.Value
			if k.cue == "moe" && v != strings.ToLower(v) {
				v = strings.ToLower(v)
			}
			names = append(names, quote(v))
		}
		lines = append(lines, k.cue+": ["+strings.Join(names, ", ")+"]")
	}
	if len(lines) > 0 {
		w.add(nil, "backend_sweep: {\n"+strings.Join(lines, "\n")+"\n}")
	}
}

func orOne(n int) int {
	if n == 0 {
		return 1
	}
	return n
}

// env: values become strings the way perf-eval rendered them (Python
// str(): True/False/None).
func (c *conv) env(w *workload, f field, server string) {
	if f.val.Kind == yaml.ScalarNode && f.val.Tag == "!!null" {
		return
	}
	if f.val.Kind != yaml.MappingNode {
		c.errorf(f.val, server+".env", "%s.env must be a mapping of names to values", server)
		return
	}
	fs, _ := c.fields(f.val, server+".env")
	var lines []string
	for _, e := range fs {
		path := server + ".env." + e.key.Value
		if e.val.Kind != yaml.ScalarNode {
			c.errorf(e.val, path, "env values must be scalars")
			continue
		}
		v := e.val.Value
		switch e.val.ShortTag() {
		case "!!bool":
			if isTrue(v) || strings.EqualFold(v, "yes") || strings.EqualFold(v, "on") {
				v = "True"
			} else {
				v = "False"
			}
			c.warnf(e.val, path, "boolean env value: perf-eval passed Python's %q; imported as that string (quote the value you mean)", v)
		case "!!null":
			v = "None"
			c.warnf(e.val, path, "empty env value: perf-eval passed Python's \"None\"; imported as that string")
		case "!!int":
			if n, err := strconv.ParseInt(v, 0, 64); err == nil {
				v = strconv.FormatInt(n, 10)
			}
		case "!!float":
			var x float64
			if e.val.Decode(&x) == nil {
				v = pyFloat(x)
			}
		}
		for _, cm := range comments(e.key.HeadComment) {
			lines = append(lines, "// "+cm)
		}
		line := label(e.key.Value) + ": " + quote(v)
		if lc := comments(e.key.LineComment, e.val.LineComment); len(lc) > 0 {
			line += " // " + strings.Join(lc, " ")
		}
		lines = append(lines, line)
	}
	if len(lines) > 0 {
		w.add(nodeComments(f), "env: {\n"+strings.Join(lines, "\n")+"\n}")
	}
}

func pyFloat(x float64) string {
	s := strconv.FormatFloat(x, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}
	return s
}

// markers are checkpoint-format markers in model ids, most specific first.
var markers = []struct {
	re   *regexp.Regexp
	prec string
}{
	{regexp.MustCompile(`(?i)mxfp4.*fp8|w-?mxfp4-a-?fp8`), "mxfp4_fp8"},
	{regexp.MustCompile(`(?i)nvfp4`), "nvfp4"},
	{regexp.MustCompile(`(?i)mxfp4`), "mxfp4"},
	{regexp.MustCompile(`(?i)mxfp8`), "mxfp8"},
	{regexp.MustCompile(`(?i)fp8`), "fp8"},
	{regexp.MustCompile(`(?i)int4|w4a16|awq|gptq`), "int4"},
	{regexp.MustCompile(`(?i)int8|w8a8`), "int8"},
	{regexp.MustCompile(`(?i)bf16`), "bf16"},
	{regexp.MustCompile(`(?i)fp16`), "fp16"},
}

// families are checkpoints whose id carries no marker but whose format is
// known; still a guess the user must confirm.
var families = []struct {
	re   *regexp.Regexp
	prec string
	why  string
}{
	{regexp.MustCompile(`(?i)(^|/)gpt-oss-`), "mxfp4", "gpt-oss checkpoints ship MXFP4 MoE weights"},
	{regexp.MustCompile(`(?i)(^|/)kimi-k2`), "int4", "Kimi-K2.x checkpoints ship INT4 (QAT) experts"},
	{regexp.MustCompile(`(?i)(^|/)deepseek-v4`), "mxfp4_fp8", "DeepSeek-V4 checkpoints ship MXFP4 experts over FP8 dense layers"},
	{regexp.MustCompile(`(?i)(^|/)kimi-k3`), "mxfp4", "Kimi-K3 ships MXFP4 weights"},
	{regexp.MustCompile(`(?i)(^|/)minimax-m2`), "fp8", "MiniMax-M2.x ships FP8 weights"},
}

// metaPrecision maps perf-eval's dashboard precision tags.
var metaPrecision = map[string]string{
	"fp8": "fp8", "bf16": "bf16", "fp16": "fp16", "int4": "int4", "int8": "int8",
	"nvfp4": "nvfp4", "mxfp4": "mxfp4", "mxfp8": "mxfp8", "mxfp4_fp8": "mxfp4_fp8",
}

// precision: a marker in the model id is taken as is; anything else is a
// guess, emitted with a TODO comment and a warning.
func (c *conv) precision(w *workload, model string, at *yaml.Node, top map[string]field) {
	meta := ""
	var metaNode *yaml.Node
	metaPath := "vllm_bench.metadata.precision"
	vb, ok := top["vllm_bench"]
	if sb, sg := top["sglang_bench"]; sg {
		vb, ok, metaPath = sb, true, "sglang_bench.metadata.precision"
	}
	if ok && vb.val.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(vb.val.Content); i += 2 {
			if vb.val.Content[i].Value == "metadata" {
				md := resolve(vb.val.Content[i+1])
				for j := 0; md.Kind == yaml.MappingNode && j+1 < len(md.Content); j += 2 {
					if md.Content[j].Value == "precision" {
						metaNode = md.Content[j+1]
						meta = metaNode.Value
					}
				}
			}
		}
	}
	base := model
	if i := strings.LastIndex(model, "/"); i >= 0 {
		base = model[i+1:]
	}
	for _, m := range markers {
		if m.re.MatchString(base) {
			if meta != "" && metaPrecision[meta] != m.prec {
				c.warnf(metaNode, metaPath, "metadata.precision %s disagrees with the model id's marker (%s); imported precision %s", meta, m.prec, m.prec)
			}
			w.add(nil, "precision: "+quote(m.prec))
			c.fallbackPath(w, m.prec)
			return
		}
	}
	guess, why := "", ""
	for _, f := range families {
		if f.re.MatchString(model) {
			guess, why = f.prec, f.why
			break
		}
	}
	if guess == "" {
		if p, ok := metaPrecision[meta]; ok {
			guess, why = p, "perf-eval's "+strings.TrimSuffix(metaPath, ".precision")+".precision"
		} else {
			guess, why = "bf16", "no marker in the model id; perf-eval's own default"
		}
	}
	c.warnf(at, "precision", "precision of %s guessed as %s (%s); verify it", model, guess, why)
	w.add([]string{fmt.Sprintf("TODO(import): verify precision: guessed %s (%s).", guess, why)}, "precision: "+quote(guess))
	c.fallbackPath(w, guess)
}

var concSuffix = regexp.MustCompile(`-conc-\d+$`)

func (c *conv) evals(w *workload, top map[string]field) {
	// Eval blocks in the original's order.
	var order []field
	for _, k := range []string{"lm_eval", "vllm_bench", "sglang_bench", "bfcl"} {
		if f, ok := top[k]; ok {
			order = append(order, f)
		}
	}
	for i := 1; i < len(order); i++ {
		for j := i; j > 0 && order[j].key.Line < order[j-1].key.Line; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	for _, f := range order {
		var text string
		switch f.key.Value {
		case "lm_eval":
			text = c.lmEval(f, w)
		case "vllm_bench":
			text = c.vllmBench(f, w)
		case "sglang_bench":
			text = c.sglangBench(f, w)
		case "bfcl":
			text = c.bfcl(f)
		}
		if text != "" {
			w.blocks = append(w.blocks, text)
			for _, cm := range nodeComments(f) {
				w.lines = append(w.lines, "// "+cm)
			}
			w.lines = append(w.lines, text)
		}
	}
}

// customJob renders perf-eval's custom_script (its B300 ablation branch) as
// a custom_job: the script, run with bash from the job's working directory,
// in the image with the GPUs, or on the host with host_runtime: true;
// custom_group reaches it as CUSTOM_GROUP.
func (c *conv) customJob(w *workload, top map[string]field) {
	f, ok := top["custom_script"]
	if !ok {
		for _, k := range []string{"custom_group", "host_runtime"} {
			if g, ok := top[k]; ok {
				c.errorf(g.key, k, "%s without custom_script: it only configured how perf-eval's B300 branch ran a custom_script; remove it", k)
			}
		}
		return
	}
	if f.val.Kind != yaml.ScalarNode || f.val.Tag != "!!str" || strings.TrimSpace(f.val.Value) == "" {
		c.errorf(f.val, "custom_script", "custom_script must be the path of a script")
		return
	}
	var lines []string
	if h, ok := top["host_runtime"]; ok {
		switch {
		case h.val.Tag != "!!bool":
			c.errorf(h.val, "host_runtime", "host_runtime must be true or false, not %q", h.val.Value)
			return
		case h.val.Value == "true":
			lines = append(lines, `where: "host"`)
		}
	}
	lines = append(lines, "command: [\"bash\", "+quote(f.val.Value)+"]")
	why := "perf-eval's B300 branch ran " + f.val.Value + " in the workload's place"
	if g, ok := top["custom_group"]; ok {
		if g.val.Kind != yaml.ScalarNode || g.val.Value == "" {
			c.errorf(g.val, "custom_group", "custom_group must be a name")
			return
		}
		lines = append(lines, "env: CUSTOM_GROUP: "+quote(g.val.Value))
		c.warnf(g.key, "custom_group", "custom_group %q reaches the script as CUSTOM_GROUP: the B300 branch's runner (not in perf-eval's main line) chose how the script saw it; check %s reads CUSTOM_GROUP", g.val.Value, f.val.Value)
	}
	c.warnf(f.key, "custom_script", "%s runs from the job's working directory: commit it where the job checks out (perf-eval kept it in its own repository)", f.val.Value)
	text := "custom_job: {\n" + strings.Join(lines, "\n") + "\n}"
	w.blocks = append(w.blocks, text)
	w.lines = append(w.lines, "// "+why+".")
	w.lines = append(w.lines, text)
}

// strictFields renders a mapping whose keys perf-eval checked; any other
// key is an error, as it was there.
func (c *conv) strictFields(m *yaml.Node, path string, allowed map[string]bool, special map[string]func(field) string) []string {
	if m.Kind != yaml.MappingNode {
		c.errorf(m, path, "%s must be a mapping", path)
		return nil
	}
	fs, _ := c.fields(m, path)
	var lines []string
	for _, f := range fs {
		k := f.key.Value
		if !allowed[k] && k == "assertions" {
			c.errorf(f.key, join(path, k), "assertions (#80) have no wlc equivalent; workload not imported")
			continue
		}
		if !allowed[k] {
			c.errorf(f.key, join(path, k), "%s: key %s is not allowed (perf-eval rejected it too)", path, k)
			continue
		}
		v := ""
		if fn, ok := special[k]; ok {
			v = fn(f)
			if v == "" {
				continue
			}
		} else {
			v = c.value(f.val, join(path, k))
		}
		for _, cm := range nodeComments(f) {
			lines = append(lines, "// "+cm)
		}
		lines = append(lines, label(k)+": "+v)
	}
	return lines
}

func block(name string, lines []string) string {
	return name + ": {\n" + strings.Join(lines, "\n") + "\n}"
}

func set(keys ...string) map[string]bool {
	m := map[string]bool{}
	for _, k := range keys {
		m[k] = true
	}
	return m
}

func (c *conv) lmEval(f field, w *workload) string {
	if f.val.Kind != yaml.MappingNode {
		c.errorf(f.val, "lm_eval", "lm_eval must be a mapping")
		return ""
	}
	fs, by := c.fields(f.val, "lm_eval")
	for _, g := range fs {
		if g.key.Value != "model_args" && g.key.Value != "tasks" {
			c.warnf(g.key, "lm_eval."+g.key.Value, "unknown key lm_eval.%s (perf-eval ignored it); kept as a TODO comment, not converted", g.key.Value)
			w.todo = append(w.todo, "lm_eval."+yamlText(g))
		}
	}
	tasks, ok := by["tasks"]
	if !ok || tasks.val.Kind != yaml.SequenceNode || len(tasks.val.Content) == 0 {
		c.warnf(f.key, "lm_eval", "lm_eval has no tasks: perf-eval ignored the block; not imported")
		return ""
	}
	var lines []string
	if ma, ok := by["model_args"]; ok {
		lines = append(lines, "model_args: "+c.value(ma.val, "lm_eval.model_args"))
	}
	var ts []string
	for i, t := range tasks.val.Content {
		path := fmt.Sprintf("lm_eval.tasks[%d]", i)
		tl := c.strictFields(resolve(t), path, set("name", "num_fewshot", "model_args"), nil)
		ts = append(ts, "{\n"+strings.Join(tl, "\n")+"\n}")
	}
	lines = append(lines, "tasks: ["+strings.Join(ts, ", ")+"]")
	return block("lm_eval", lines)
}

func (c *conv) vllmBench(f field, w *workload) string {
	allowed := set("name", "backend", "dataset", "input_len", "output_len", "num_prompts", "max_concurrency", "repetitions", "args", "speed_bench_dataset_subset", "speed_bench_category")
	return c.bench(f, w, "vllm_bench", allowed)
}

// sglangBench converts perf-eval's sglang_bench block (its configs take
// the vllm_bench fields bench_serving uses; speed_bench has no SGLang
// client in perf-eval).
func (c *conv) sglangBench(f field, w *workload) string {
	return c.bench(f, w, "sglang_bench", set("name", "backend", "dataset", "input_len", "output_len", "num_prompts", "max_concurrency", "repetitions", "args"))
}

// bench converts a benchmark block named name whose configs may hold the
// allowed keys.
func (c *conv) bench(f field, w *workload, name string, allowed map[string]bool) string {
	if f.val.Kind != yaml.MappingNode {
		c.errorf(f.val, name, "%s must be a mapping", name)
		return ""
	}
	fs, by := c.fields(f.val, name)
	for _, g := range fs {
		switch g.key.Value {
		case "configs", "metadata":
		case "sweep":
			if name != "vllm_bench" {
				c.errorf(g.key, name+".sweep", "%s.sweep has no wlc equivalent; write the configs out (max_concurrency takes a list); workload not imported", name)
			}
		default:
			c.warnf(g.key, name+"."+g.key.Value, "unknown key %s.%s (perf-eval ignored it); kept as a TODO comment, not converted", name, g.key.Value)
			w.todo = append(w.todo, name+"."+yamlText(g))
		}
	}
	var lines []string
	if md, ok := by["metadata"]; ok && md.val.Kind == yaml.MappingNode {
		mfs, _ := c.fields(md.val, name+".metadata")
		var ml []string
		for _, m := range mfs {
			if m.key.Value == "precision" {
				ml = append(ml, fmt.Sprintf("// precision: %s dropped (the typed precision replaces it).", commentText(m.val.Value)))
				continue
			}
			ml = append(ml, label(m.key.Value)+": "+c.value(m.val, name+".metadata."+m.key.Value))
		}
		if len(ml) > 0 && !(len(ml) == 1 && strings.HasPrefix(ml[0], "//")) {
			lines = append(lines, block("metadata", ml))
		} else if len(ml) == 1 {
			lines = append(lines, ml[0])
		}
	}
	cf, ok := by["configs"]
	if sw, sweep := by["sweep"]; sweep {
		if l := c.benchSweep(sw); l != "" {
			lines = append(lines, l)
		}
		if !ok {
			return block("vllm_bench", lines)
		}
	}
	if !ok || cf.val.Kind != yaml.SequenceNode || len(cf.val.Content) == 0 {
		c.warnf(f.key, name, "%s has no configs: nothing to run; not imported", name)
		return ""
	}
	var cs []string
	for i, cfg := range cf.val.Content {
		path := fmt.Sprintf("%s.configs[%d]", name, i)
		cfg = resolve(cfg)
		if cfg.Kind == yaml.MappingNode {
			dataset := "random"
			for j := 0; j+1 < len(cfg.Content); j += 2 {
				if cfg.Content[j].Value == "dataset" {
					dataset = cfg.Content[j+1].Value
				}
			}
			for j := 0; j+1 < len(cfg.Content); j += 2 {
				k := cfg.Content[j].Value
				if (k == "speed_bench_dataset_subset" || k == "speed_bench_category") && dataset != "speed_bench" {
					c.warnf(cfg.Content[j], path+"."+k, "%s on a %s-dataset config: perf-eval ignored it; imported as is, and wlc vet will refuse it (delete it)", k, dataset)
				}
			}
		}
		cfgName := func(g field) string {
			n := g.val.Value
			if s := concSuffix.ReplaceAllString(n, ""); s != n {
				c.warnf(g.val, path+".name", "config name %s ends in -conc-N, which wlc (like perf-eval since #58) appends per run; imported as %s", n, s)
				n = s
			}
			return quote(n)
		}
		cl := c.strictFields(cfg, path, allowed, map[string]func(field) string{"name": cfgName})
		cs = append(cs, "{\n"+strings.Join(cl, "\n")+"\n}")
	}
	lines = append(lines, "configs: ["+strings.Join(cs, ", ")+"]")
	return block(name, lines)
}

// benchSweep maps #82's vllm_bench.sweep: shapes of {isl, osl},
// concurrency as a list or {start, end, factor}, prompts_per_concurrency
// and min_prompts.
func (c *conv) benchSweep(f field) string {
	if f.val.Kind != yaml.MappingNode {
		c.errorf(f.val, "vllm_bench.sweep", "vllm_bench.sweep must be a mapping")
		return ""
	}
	fs, _ := c.fields(f.val, "vllm_bench.sweep")
	var lines []string
	for _, g := range fs {
		path := "vllm_bench.sweep." + g.key.Value
		switch g.key.Value {
		case "shapes":
			if g.val.Kind != yaml.SequenceNode || len(g.val.Content) == 0 {
				c.errorf(g.val, path, "shapes must be a non-empty list of {isl, osl}")
				continue
			}
			var shapes []string
			for i, sh := range g.val.Content {
				sfs := c.strictFields(sh, fmt.Sprintf("%s[%d]", path, i), set("isl", "osl"), nil)
				for j := range sfs {
					sfs[j] = strings.Replace(strings.Replace(sfs[j], "isl:", "input_len:", 1), "osl:", "output_len:", 1)
				}
				shapes = append(shapes, "{"+strings.Join(sfs, ", ")+"}")
			}
			lines = append(lines, nodeCommentLines(g)+"shapes: ["+strings.Join(shapes, ", ")+"]")
		case "concurrency", "prompts_per_concurrency", "min_prompts", "backend", "repetitions", "args":
			lines = append(lines, nodeCommentLines(g)+label(g.key.Value)+": "+c.value(g.val, path))
		default:
			c.errorf(g.key, path, "unknown key vllm_bench.sweep.%s (perf-eval #82 refused it)", g.key.Value)
		}
	}
	return block("sweep", lines)
}

func nodeCommentLines(f field) string {
	var b strings.Builder
	for _, cm := range nodeComments(f) {
		b.WriteString("// " + cm + "\n")
	}
	return b.String()
}

func (c *conv) bfcl(f field) string {
	lines := c.strictFields(f.val, "bfcl", set("test_categories", "num_threads", "temperature", "maximum_step_limit", "max_test_cases"), nil)
	if len(lines) == 0 {
		return ""
	}
	return block("bfcl", lines)
}

// emit writes the CUE file.
func (c *conv) emit(w *workload) {
	b := &c.out
	b.WriteString("package workloads\n\n")
	for _, h := range w.header {
		fmt.Fprintf(b, "// %s\n", commentText(h))
	}
	fmt.Fprintf(b, "// Imported from perf-eval %s by `wlc import perf-eval`; check it with `wlc vet`.\n", commentText(c.file))
	for _, l := range w.lets {
		b.WriteString(l + "\n\n")
	}
	fmt.Fprintf(b, "workloads: %s: {\n", label(c.key))
	for _, l := range w.lines {
		b.WriteString(l + "\n")
	}
	if len(w.todo) > 0 {
		b.WriteString("// TODO(import): perf-eval keys with no wlc field, not converted:\n")
		for _, t := range w.todo {
			for _, l := range strings.Split(t, "\n") {
				fmt.Fprintf(b, "//   %s\n", commentText(l))
			}
		}
	}
	b.WriteString("}\n")
}
