package load

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/token"

	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/internal/engine/cmdline"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/schema"
)

// The rules in this file need Go: they compare across list entries, scan
// argv tokens, or are advisory (warnings, which CUE cannot express). Each
// finding points at the user's value.

func (l *loader) pos(v cue.Value, path string) token.Pos {
	if path == "" {
		// The workload itself: its label in the user's file, not the
		// pattern in wlc.cue that types every workload.
		if pos := l.labelPos(v.Path().Selectors()); pos.IsValid() {
			return pos
		}
	}
	p := pathOf(path)
	if p.Err() != nil {
		return token.NoPos
	}
	for {
		if pos := l.userPos(v.LookupPath(p)); pos.IsValid() {
			return pos
		}
		sels := p.Selectors()
		if len(sels) <= 1 {
			return l.userPos(v.LookupPath(pathOf("profile")))
		}
		p = cue.MakePath(sels[:len(sels)-1]...)
	}
}

// position is where a finding is reported, as printed (File relative to
// the working directory); a shard's cached results keep these, not CUE
// positions.
type position struct {
	File         string
	Line, Column int
}

// at is where pos is reported (the zero position when pos is invalid).
func (l *loader) at(pos token.Pos) position {
	if !pos.IsValid() {
		return position{}
	}
	return position{l.rel(pos.Filename()), pos.Line(), pos.Column()}
}

func (l *loader) report(sev diag.Severity, base string, v cue.Value, field, format string, args ...any) {
	at := l.at(l.pos(v, field))
	d := diag.Diagnostic{Severity: sev, Path: base, Message: fmt.Sprintf(format, args...), File: at.File, Line: at.Line, Column: at.Column}
	if field != "" {
		d.Path = base + "." + field
	}
	l.res.Diags.Add(d)
}

func (l *loader) checkProfile(pv cue.Value, p schema.Profile) {
	base := "profiles." + quoteLabel(p.Name)
	for name := range p.Env {
		if containsStr(p.Secrets, name) {
			l.report(diag.Error, base, pv, "env."+quoteLabel(name), "%s is a secret of this profile; its value must not be written into generated files: remove it from env (it is passed by name from the agent's environment)", name)
		}
	}
	l.checkValues(pv, base, p, p.Secrets)
	l.vetProfile(pv, p)
}

// checkFields applies the Go rules that read single fields (env against
// secrets, extra_args against typed flags). They also run on a workload
// that failed validation, decoded as far as it goes, so a broken workload
// shows these errors together with the schema's.
// decoded says w is the whole workload, decoded from wv (it passed
// validation); otherwise w holds only the fields that decoded alone.
func (l *loader) checkFields(wv cue.Value, w *Workload, decoded bool) {
	base := "workloads." + quoteLabel(w.Name)
	errf := func(field, format string, args ...any) { l.report(diag.Error, base, wv, field, format, args...) }
	l.engineOptions(wv, base, w, decoded) // first: it renders serve's option fields
	prof, known := l.res.Profiles[w.Profile]
	secrets := append([]string(nil), w.Secrets...)
	if known {
		secrets = append(secrets, prof.Secrets...)
	}
	for name := range w.Env {
		if containsStr(secrets, name) {
			errf("env."+quoteLabel(name), "%s is a secret; its value must not be written into generated files: remove it from env (secrets are passed by name from the job's environment)", name)
		}
	}

	for i, tok := range w.Serve.ExtraArgs {
		if i < w.ownExtraArgs() {
			continue // the recipe's, checked when derived
		}
		i -= w.ownExtraArgs()
		m, ok := cmdline.VLLMServe.Resolve(tok)
		if ok && m.Option == "--attention-backend" && w.BackendSweep != nil && len(w.BackendSweep.Attention) > 0 {
			errf(fmt.Sprintf("serve.extra_args[%d]", i), "%s is set for each run by backend_sweep.attention; remove it from extra_args (list the backends in the sweep)", tok)
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
		errf(fmt.Sprintf("serve.extra_args[%d]", i), "%s is set by %s; remove it from extra_args (the later flag would silently win)", what, m.Flag.SetBy())
	}
	l.checkValues(wv, base, &w.Workload, secrets)
	l.checkArgvValues(wv, base, w)
	l.checkModelArgs(wv, base, &w.Workload)
	l.checkBenchArgs(wv, w, decoded)
	l.checkEngine(wv, base, w)
	l.checkSGLangBenchArgs(wv, base, w)
}

// checkBenchArgs refuses a config's args key that vLLM reads as an option
// wlc sets itself: an alias, an abbreviation (num-prom), or a key with a
// value in it (max-concurrency=64). The exact names are the schema's rule
// (bench_owned.cue), reported on the same field.
func (l *loader) checkBenchArgs(wv cue.Value, w *Workload, decoded bool) {
	base := "workloads." + quoteLabel(w.Name)
	check := func(ci int, k string) {
		opt := "--" + plan.BenchArgName(k)
		m, ok := cmdline.VLLMBench.Resolve(opt)
		if !ok || m.Flag == nil || cmdline.VLLMBench.Lookup(opt) != nil {
			return
		}
		field := fmt.Sprintf("vllm_bench.configs[%d].args.%s", ci, quoteLabel(k))
		if m.Flag.Field != "" {
			l.report(diag.Error, base, wv, field, "bench arg %s (%s to vLLM) is set by wlc from %s; set that instead and remove %s from args", k, m.Canonical(), m.Flag.Field, k)
		} else {
			l.report(diag.Error, base, wv, field, "bench arg %s (%s to vLLM) is set by %s; remove it from args", k, m.Canonical(), m.Flag.Owner)
		}
	}
	if decoded {
		// The decoded keys: no CUE lookups (an evaluation context each)
		// for the many workloads whose args are fine. Findings are sorted
		// by position when printed; the keys are sorted here so the
		// order of reporting does not depend on the map's.
		if w.VLLMBench != nil {
			for ci, c := range w.VLLMBench.Configs {
				for _, k := range slices.Sorted(maps.Keys(c.Args)) {
					check(ci, k)
				}
			}
		}
		return
	}
	// Read from the value: a workload that failed validation may not decode.
	for ci := 0; ; ci++ {
		cv := wv.LookupPath(cue.MakePath(cue.Str("vllm_bench"), cue.Str("configs"), cue.Index(ci)))
		if !cv.Exists() {
			return
		}
		it, err := cv.LookupPath(pathOf("args")).Fields()
		for err == nil && it.Next() {
			check(ci, it.Selector().Unquoted())
		}
	}
}

// checkWorkload applies the Go-side rules; it reports whether w is valid.
func (l *loader) checkWorkload(wv cue.Value, w *Workload) bool {
	before := l.res.Diags.Count(diag.Error)
	base := "workloads." + quoteLabel(w.Name)
	errf := func(field, format string, args ...any) { l.report(diag.Error, base, wv, field, format, args...) }
	warnf := func(field, format string, args ...any) { l.report(diag.Warning, base, wv, field, format, args...) }

	if w.LMEval == nil && w.VLLMBench == nil && w.SGLangBench == nil && w.BFCL == nil && len(w.CustomSteps) == 0 && w.CustomJob == nil {
		errf("", "workload runs nothing: define at least one of lm_eval, %s, bfcl or custom_steps (or a custom_job in the server's place)", map[bool]string{false: "vllm_bench", true: "sglang_bench"}[w.Engine == schema.EngineSGLang])
	}

	prof, known := l.res.Profiles[w.Profile]
	l.checkFields(wv, w, true)

	if known {
		l.vetWorkload(wv, base, w, prof)
	}
	l.checkFlags(wv, base, w)
	l.checkDisagg(wv, base, w)

	if w.Engine == schema.EngineSGLang {
		if w.BFCL != nil && (w.SGLang == nil || w.SGLang.ToolCallParser == "") {
			warnf("bfcl", "bfcl scores tool calls but sglang.tool_call_parser is unset, so the server returns tool calls as plain text; set sglang.tool_call_parser")
		}
	} else if w.BFCL != nil && w.Serve.ToolCallParser == "" {
		warnf("bfcl", "bfcl scores tool calls but serve.tool_call_parser is unset, so the server returns tool calls as plain text; set tool_call_parser (and enable_auto_tool_choice)")
	}

	// Both clients' configs expand the same way: one run per concurrency.
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
	{
		runs := map[string]int{}
		for ci, c := range sweeps {
			field := fmt.Sprintf("%s.configs[%d]", block, ci)
			if block == "vllm_bench" && ci >= len(w.VLLMBench.Configs) {
				field = "vllm_bench.sweep"
			}
			for k, conc := range c.MaxConcurrency.Values {
				run := fmt.Sprintf("%s-conc-%d", c.Name, conc)
				if prev, dup := runs[run]; dup {
					errf(field+".name", "run %s is produced by configs[%d] and configs[%d]; give the configs different names or concurrencies", run, prev, ci)
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
					warnf(field+".num_prompts", "num_prompts %d at max_concurrency %d is not a whole number of waves: the last wave runs at concurrency %d and skews throughput; use %s", np, conc, np%conc, suggest)
				}
				if np < conc {
					warnf(field+".num_prompts", "num_prompts %d is below max_concurrency %d, so the server never sees the requested concurrency", np, conc)
				}
			}
		}
	}

	if hint := precisionHint(w.Model); hint != "" && !precisionMatches(hint, w.Precision) {
		warnf("precision", "model id %s looks like a %s checkpoint but precision is %s; check which weights the checkpoint holds", w.Model, hint, w.Precision)
	}
	return l.res.Diags.Count(diag.Error) == before
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

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func quoteLabel(s string) string {
	if isIdent(s) {
		return s
	}
	return fmt.Sprintf("%q", s)
}

// checkModelArgs refuses the lm_eval model_args plan.CheckModelArg does:
// a key wlc sets itself (the workload's would be dropped) and a value
// lm_eval cannot use as the key's kind (which fails, or silently reads as
// true, only once the server is up and the eval starts). In Go, not the
// schema: typed or refused optional keys would be evaluated in every
// model_args of every workload.
func (l *loader) checkModelArgs(wv cue.Value, base string, w *schema.Workload) {
	if w.LMEval == nil {
		return
	}
	check := func(at string, args map[string]any) {
		for _, k := range slices.Sorted(maps.Keys(args)) {
			if msg := plan.CheckModelArg(k, args[k]); msg != "" {
				l.reportValue(wv, base, ValueFinding{Path: at + "." + pathLabel(k), Message: msg})
			}
		}
	}
	check("lm_eval.model_args", w.LMEval.ModelArgs)
	for i, t := range w.LMEval.Tasks {
		check(fmt.Sprintf("lm_eval.tasks[%d].model_args", i), t.ModelArgs)
	}
}
