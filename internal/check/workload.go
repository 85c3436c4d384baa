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
// extra_args against typed flags, the value rules, the engines' argv).
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

	for i, tok := range w.Serve.ExtraArgs {
		if i < w.Own {
			continue // the recipe's, checked when derived
		}
		i -= w.Own
		m, ok := cmdline.VLLMServe.Resolve(tok)
		if ok && m.Option == "--attention-backend" && w.BackendSweep != nil && len(w.BackendSweep.Attention) > 0 {
			fs.errorf(fmt.Sprintf("serve.extra_args[%d]", i), "%s is set for each run by backend_sweep.attention; remove it from extra_args (list the backends in the sweep)", tok)
			continue
		}
		if !ok || m.Flag == nil {
			continue
		}
		what := tok
		if m.Written != m.Option && m.Written != "--no-"+strings.TrimPrefix(m.Option, "--") {
			// an alias or an abbreviation: say what vLLM reads
			what = fmt.Sprintf("%s (%s to vLLM)", tok, m.Canonical())
		}
		fs.errorf(fmt.Sprintf("serve.extra_args[%d]", i), "%s is set by %s; remove it from extra_args (the later flag would silently win)", what, m.Flag.SetBy())
	}
	fs = append(fs, valueFindings(&w.Workload, secrets)...)
	fs = append(fs, argvFindings(&w.Workload, w.Own)...)
	fs.modelArgs(&w.Workload)
	fs.benchArgs(w)
	fs.engine(w)
	fs.sglangBenchArgs(w)
	return fs
}

// benchArgs refuses a config's args key that vLLM reads as an option wlc
// sets itself: an alias, an abbreviation (num-prom), or a key with a
// value in it (max-concurrency=64). The exact names are the schema's rule
// (bench_owned.cue), reported on the same field.
func (fs *findings) benchArgs(w *Workload) {
	check := func(ci int, k string) {
		opt := "--" + plan.BenchArgName(k)
		m, ok := cmdline.VLLMBench.Resolve(opt)
		if !ok || m.Flag == nil || cmdline.VLLMBench.Lookup(opt) != nil {
			return
		}
		field := fmt.Sprintf("vllm_bench.configs[%d].args.%s", ci, Label(k))
		if m.Flag.Field != "" {
			fs.errorf(field, "bench arg %s (%s to vLLM) is set by wlc from %s; set that instead and remove %s from args", k, m.Canonical(), m.Flag.Field, k)
		} else {
			fs.errorf(field, "bench arg %s (%s to vLLM) is set by %s; remove it from args", k, m.Canonical(), m.Flag.Owner)
		}
	}
	if !w.Decoded {
		for ci, keys := range w.ArgKeys {
			for _, k := range keys {
				check(ci, k)
			}
		}
		return
	}
	if w.VLLMBench != nil {
		for ci, c := range w.VLLMBench.Configs {
			for _, k := range slices.Sorted(maps.Keys(c.Args)) {
				check(ci, k)
			}
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
	fs.sweeps(w)
	if hint := precisionHint(w.Model); hint != "" && !precisionMatches(hint, w.Precision) {
		fs.warnf("precision", "model id %s looks like a %s checkpoint but precision is %s; check which weights the checkpoint holds", w.Model, hint, w.Precision)
	}
	return fs
}

// sweeps checks the benchmark runs: both clients' configs expand the same
// way, one run per concurrency; two runs of one name, and prompt counts
// that leave a partial last wave, are findings.
func (fs *findings) sweeps(w *Workload) {
	type sweep struct {
		Name                       string
		MaxConcurrency, NumPrompts schema.IntOrList
	}
	var sweeps []sweep
	block := "vllm_bench"
	if w.VLLMBench != nil {
		for _, c := range w.VLLMBench.AllConfigs() {
			sweeps = append(sweeps, sweep{c.Name, c.MaxConcurrency, c.NumPrompts})
		}
	}
	if w.SGLangBench != nil {
		block = "sglang_bench"
		for _, c := range w.SGLangBench.Configs {
			sweeps = append(sweeps, sweep{c.Name, c.MaxConcurrency, c.NumPrompts})
		}
	}
	runs := map[string]int{}
	for ci, c := range sweeps {
		field := fmt.Sprintf("%s.configs[%d]", block, ci)
		if block == "vllm_bench" && ci >= len(w.VLLMBench.Configs) {
			field = "vllm_bench.sweep"
		}
		for k, conc := range c.MaxConcurrency.Values {
			run := fmt.Sprintf("%s-conc-%d", c.Name, conc)
			if prev, dup := runs[run]; dup {
				fs.errorf(field+".name", "run %s is produced by configs[%d] and configs[%d]; give the configs different names or concurrencies", run, prev, ci)
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
