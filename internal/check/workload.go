package check

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/internal/engine/cmdline"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/schema"
)

// ProfileRules are the rules of a profile: no secret written into env,
// and the value rules.
func ProfileRules(p *schema.Profile) []Diagnostic {
	var fs findings
	for _, name := range slices.Sorted(maps.Keys(p.Env)) {
		if slices.Contains(p.Secrets, name) {
			fs.errorf("env."+Label(name), "%s is a secret of this profile; its value must not be written into generated files: remove it from env (it is passed by name from the agent's environment)", name)
		}
	}
	return append(fs, valueFindings(p, p.Secrets)...)
}

// FieldRules are the rules that read single fields (env against secrets,
// extra_args against typed flags, the value rules, the engines' argv) or
// one list (a task or category listed twice, the bench configs' runs).
// They also apply to a workload that failed the schema, decoded as far
// as it goes, so a broken workload shows these errors together with the
// schema's.
func FieldRules(w *Workload, env *Env) []Diagnostic {
	var fs findings
	prof, known := env.Profiles[w.Profile]
	secrets := append([]string(nil), w.Secrets...)
	if known {
		secrets = append(secrets, prof.Secrets...)
	}
	for _, name := range slices.Sorted(maps.Keys(w.Env)) {
		if slices.Contains(secrets, name) {
			fs.errorf("env."+Label(name), "%s is a secret; its value must not be written into generated files: remove it from env (secrets are passed by name from the job's environment)", name)
		}
	}

	own := w.Own
	if own > len(w.Serve.ExtraArgs) {
		own = len(w.Serve.ExtraArgs)
	}
	extra := w.Serve.ExtraArgs[own:] // before: the recipe's, checked when derived
	if w.BackendSweep != nil && len(w.BackendSweep.Attention) > 0 {
		for _, o := range cmdline.VLLMServe.Owned(extra, map[string]string{"--attention-backend": "backend_sweep.attention"}) {
			if o.Option == "--attention-backend" {
				fs.errorf(fmt.Sprintf("serve.extra_args[%d]", o.Start), "%s is set for each run by backend_sweep.attention; remove it from extra_args (list the backends in the sweep)", extra[o.Start])
			}
		}
	}
	for _, o := range cmdline.VLLMServe.Owned(extra, nil) {
		fs.errorf(fmt.Sprintf("serve.extra_args[%d]", o.Start), "%s is set by %s; remove it from extra_args (the later flag would silently win)", o.Spelled(extra[o.Start], "vLLM"), o.SetBy)
	}
	fs = append(fs, valueFindings(&w.Workload, secrets)...)
	fs = append(fs, argvFindings(&w.Workload, w.Own)...)
	fs.modelArgs(&w.Workload)
	fs.listedTwice(&w.Workload)
	fs.sweeps(w)
	fs.benchArgs(w)
	fs.routerArgs(w)
	fs.engine(w)
	fs.sglangBenchArgs(w)
	return fs
}

// benchArgs refuses a vllm_bench config's or sweep's args key that vLLM
// reads as an option wlc sets itself on that route (the sweep also sets
// --num-warmups): an alias, an abbreviation (num-prom), a key with a
// value in it (max-concurrency=64); and two keys that are one option
// (temperature and --temperature: the later would silently win). The
// exact names are the schema's rule (bench_owned.cue, #BenchSweep),
// reported on the same field.
func (fs *findings) benchArgs(w *Workload) {
	check := func(at string, args map[string]any, sweep bool) {
		var also map[string]string
		if sweep {
			also = map[string]string{"--num-warmups": "the sweep (each run's --num-warmups is its concurrency)"}
		}
		seen := map[string]string{} // canonical option → the key that set it
		for _, k := range slices.Sorted(maps.Keys(args)) {
			field := at + "." + Label(k)
			argv := plan.BenchArgs(map[string]any{k: args[k]})
			if len(argv) == 0 {
				continue // false or null: no option
			}
			// The exact names are the schema's rule.
			exact := cmdline.VLLMBench.Lookup(argv[0]) != nil || sweep && argv[0] == "--num-warmups"
			if owned := cmdline.VLLMBench.Owned(argv, also); len(owned) > 0 {
				for _, o := range owned {
					if exact && argv[o.Start] == argv[0] {
						continue
					}
					what := fmt.Sprintf("bench arg %s (%s to vLLM)", k, o.Canonical())
					if argv[o.Start] != argv[0] {
						what = fmt.Sprintf("bench arg %s's value %s (%s to vLLM)", k, argv[o.Start], o.Canonical())
					}
					fs.errorf(field, "%s is set by %s; %s", what, map[bool]string{true: "wlc from ", false: ""}[o.Field]+o.SetBy, o.Fix("args"))
					break
				}
				continue
			}
			m, ok := cmdline.VLLMBench.Resolve(argv[0])
			if !ok || strings.Trim(m.Option, "-") == "" {
				fs.errorf(field, "bench arg %q names no option: vLLM reads %s as %s; write the option's name (temperature, --top-p)", k, argv[0], map[bool]string{true: "a value", false: "the end of its options"}[argv[0] != "--"])
				continue
			}
			if m.Key != "" && len(argv) == 1 && !m.HasValue {
				// vLLM takes the token after a dotted key as its value,
				// whatever it is: here, the next option wlc writes.
				fs.errorf(field, "bench arg %s sets key %s of %s but has no value (vLLM would take the next option as it); give it a value, e.g. %s: 1", k, m.Key, m.Option, Label(k))
				continue
			}
			if prev, dup := seen[m.Canonical()]; dup {
				fs.errorf(field, "bench args %s and %s are both %s to vLLM (the later would silently win); keep one", prev, k, m.Canonical())
				continue
			}
			seen[m.Canonical()] = k
		}
	}
	keysOnly := func(keys []string) map[string]any {
		m := map[string]any{}
		for _, k := range keys {
			m[k] = true
		}
		return m
	}
	if !w.Decoded {
		for ci, keys := range w.ArgKeys {
			check(fmt.Sprintf("vllm_bench.configs[%d].args", ci), keysOnly(keys), false)
		}
		check("vllm_bench.sweep.args", w.SweepArgs, true)
		return
	}
	if w.VLLMBench != nil {
		for ci, c := range w.VLLMBench.Configs {
			check(fmt.Sprintf("vllm_bench.configs[%d].args", ci), c.Args, false)
		}
		if s := w.VLLMBench.Sweep; s != nil {
			check("vllm_bench.sweep.args", s.Args, true)
		}
	}
}

// modelArgs refuses the lm_eval model_args plan.CheckModelArg does: a key
// wlc sets itself (the workload's would be dropped) and a value lm_eval
// cannot use as the key's kind (which fails, or silently reads as true,
// only once the server is up and the eval starts). In Go, not the schema:
// typed or refused optional keys would be evaluated in every model_args
// of every workload.
func (fs *findings) modelArgs(w *schema.Workload) {
	if w.LMEval == nil {
		return
	}
	check := func(at string, args map[string]any) {
		for _, k := range slices.Sorted(maps.Keys(args)) {
			if msg := plan.CheckModelArg(k, args[k]); msg != "" {
				*fs = append(*fs, Diagnostic{Path: at + "." + pathLabel(k), Severity: diag.Error, Message: msg, Value: true})
			}
		}
	}
	check("lm_eval.model_args", w.LMEval.ModelArgs)
	for i, t := range w.LMEval.Tasks {
		check(fmt.Sprintf("lm_eval.tasks[%d].model_args", i), t.ModelArgs)
	}
}

// listedTwice refuses an lm_eval task or a BFCL category listed twice:
// results are kept by task and by category, so the second run's would
// replace the first's. (In Go, not the schema: as a comprehension per
// workload it cost cold vet 4% of its CPU.)
func (fs *findings) listedTwice(w *schema.Workload) {
	if w.LMEval != nil {
		seen := map[string]bool{}
		for i, t := range w.LMEval.Tasks {
			if t.Name != "" && seen[t.Name] {
				fs.errorf(fmt.Sprintf("lm_eval.tasks[%d].name", i), "task %s is listed twice; its results are kept by task name (lm_eval/%s), so the second run would overwrite the first: list each task once (a task with other settings belongs in another workload)", t.Name, t.Name)
			}
			seen[t.Name] = true
		}
	}
	if w.BFCL != nil {
		seen := map[string]bool{}
		for i, c := range w.BFCL.TestCategories {
			if seen[c] {
				fs.errorf(fmt.Sprintf("bfcl.test_categories[%d]", i), "test category %s is listed twice, so it would run twice and its second run's results would replace the first's; list each category once", c)
			}
			seen[c] = true
		}
	}
}

// WorkloadRules are every rule of a decoded workload: FieldRules, the
// vLLM flag catalogs, disaggregation, and the rules across its parts
// (something to run, run names within the workload, advisories).
func WorkloadRules(w *Workload, env *Env) []Diagnostic {
	var fs findings
	if w.LMEval == nil && w.VLLMBench == nil && w.SGLangBench == nil && w.BFCL == nil && len(w.CustomSteps) == 0 && w.CustomJob == nil {
		fs.errorf("", "workload runs nothing: define at least one of lm_eval, %s, bfcl or custom_steps (or a custom_job in the server's place)", map[bool]string{false: "vllm_bench", true: "sglang_bench"}[w.Engine == schema.EngineSGLang])
	}
	fs = append(fs, FieldRules(w, env)...)
	fs.flags(w, env)
	fs.disagg(w)

	if w.Engine == schema.EngineSGLang {
		if w.BFCL != nil && (w.SGLang == nil || w.SGLang.ToolCallParser == "") {
			fs.warnf("bfcl", "bfcl scores tool calls but sglang.tool_call_parser is unset, so the server returns tool calls as plain text; set sglang.tool_call_parser")
		}
	} else if w.BFCL != nil && w.Serve.ToolCallParser == "" {
		fs.warnf("bfcl", "bfcl scores tool calls but serve.tool_call_parser is unset, so the server returns tool calls as plain text; set tool_call_parser (and enable_auto_tool_choice)")
	}
	if hint := precisionHint(w.Model); hint != "" && !precisionMatches(hint, w.Precision) {
		fs.warnf("precision", "model id %s looks like a %s checkpoint but precision is %s; check which weights the checkpoint holds", w.Model, hint, w.Precision)
	}
	return fs
}

// sweeps checks the benchmark runs: both clients' configs expand the same
// way, one run per concurrency; two runs of one name, and prompt counts
// that leave a partial last wave, are findings. Each client's configs are
// checked on their own (a workload the schema refused for holding both
// still has each block checked).
func (fs *findings) sweeps(w *Workload) {
	if b := w.VLLMBench; b != nil {
		var cs []benchRuns
		for _, c := range b.AllConfigs() {
			cs = append(cs, benchRuns{c.Name, c.MaxConcurrency, c.NumPrompts})
		}
		fs.runs("vllm_bench", cs, func(ci int) (int, bool) {
			if ci < len(b.Configs) {
				return 0, false // a sweep's configs follow, one per shape and concurrency
			}
			return (ci - len(b.Configs)) / max(len(b.Sweep.Concurrency.Values()), 1), true
		})
	}
	if b := w.SGLangBench; b != nil {
		var cs []benchRuns
		for _, c := range b.Configs {
			cs = append(cs, benchRuns{c.Name, c.MaxConcurrency, c.NumPrompts})
		}
		fs.runs("sglang_bench", cs, func(int) (int, bool) { return 0, false })
	}
}

// benchRuns is what names a config's runs and sizes their waves.
type benchRuns struct {
	Name                       string
	MaxConcurrency, NumPrompts schema.IntOrList
}

// runs checks one client's configs (block's), of which shape says which
// come from a sweep's shape.
func (fs *findings) runs(block string, configs []benchRuns, shape func(ci int) (int, bool)) {
	source := func(ci int) string {
		if s, ok := shape(ci); ok {
			return fmt.Sprintf("sweep.shapes[%d]", s)
		}
		return fmt.Sprintf("configs[%d]", ci)
	}
	runs := map[string]int{}
	told := map[[2]string]bool{}
	for ci, c := range configs {
		field := block + "." + source(ci)
		for k, conc := range c.MaxConcurrency.Values {
			run := fmt.Sprintf("%s-conc-%d", c.Name, conc)
			if prev, dup := runs[run]; dup && !told[[2]string{source(prev), source(ci)}] {
				told[[2]string{source(prev), source(ci)}] = true // once for the pair, not per run
				_, prevShape := shape(prev)
				_, isShape := shape(ci)
				switch {
				case prevShape && isShape:
					fs.errorf(field, "run %s is produced by %s and %s, the same input_len and output_len; list each shape once", run, source(prev), source(ci))
				case isShape:
					fs.errorf(field, "run %s is produced by %s and %s; give %s another name", run, source(prev), source(ci), source(prev))
				default:
					fs.errorf(field+".name", "run %s is produced by %s and %s; give the configs different names or concurrencies", run, source(prev), source(ci))
				}
			}
			runs[run] = ci
			np := c.NumPrompts.Values[0]
			if len(c.NumPrompts.Values) == len(c.MaxConcurrency.Values) {
				np = c.NumPrompts.Values[k]
			}
			if np%conc != 0 {
				lo, hi := (np/conc)*conc, (np/conc+1)*conc
				suggest := fmt.Sprintf("%d", hi)
				if lo > 0 {
					suggest = fmt.Sprintf("%d or %d", lo, hi)
				}
				fs.warnf(field+".num_prompts", "num_prompts %d at max_concurrency %d is not a whole number of waves: the last wave runs at concurrency %d and skews throughput; use %s", np, conc, np%conc, suggest)
			}
			if np < conc {
				fs.warnf(field+".num_prompts", "num_prompts %d is below max_concurrency %d, so the server never sees the requested concurrency", np, conc)
			}
		}
	}
}

// precisionHint reads the format marker Hugging Face ids conventionally
// carry; it is only used to warn, never to decide.
func precisionHint(model string) string {
	m := strings.ToLower(model)
	for _, k := range []string{"nvfp4", "mxfp4", "mxfp8", "fp8", "int4", "w4a16", "awq", "gptq", "int8", "w8a8", "bf16"} {
		if strings.Contains(m, k) {
			switch k {
			case "w4a16", "awq", "gptq":
				return "int4"
			case "w8a8":
				return "int8"
			}
			return k
		}
	}
	return ""
}

func precisionMatches(hint, precision string) bool {
	switch hint {
	case "fp8":
		return precision == "fp8" || precision == "mxfp4_fp8" || strings.HasSuffix(precision, "fp8")
	case "mxfp4":
		return precision == "mxfp4" || precision == "mxfp4_fp8"
	case "int8":
		return precision == "int8" || precision == "fp8"
	}
	return hint == precision
}
