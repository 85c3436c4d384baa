package load

import (
	"fmt"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/token"

	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/schema"
)

// The rules in this file need Go: they compare across list entries, scan
// argv tokens, or are advisory (warnings, which CUE cannot express). Each
// finding points at the user's value.

// servedFlags are the `vllm serve` options wlc owns: typed fields or the
// runner (port, host, multi-node rendezvous). extra_args must not repeat
// them, or the later token silently wins.
var servedFlags = map[string]string{
	"tensor-parallel-size":         "serve.tensor_parallel_size",
	"tp":                           "serve.tensor_parallel_size",
	"data-parallel-size":           "serve.data_parallel_size",
	"dp":                           "serve.data_parallel_size",
	"pipeline-parallel-size":       "serve.pipeline_parallel_size",
	"pp":                           "serve.pipeline_parallel_size",
	"enable-expert-parallel":       "serve.enable_expert_parallel",
	"kv-cache-dtype":               "serve.kv_cache_dtype",
	"max-model-len":                "serve.max_model_len",
	"max-num-seqs":                 "serve.max_num_seqs",
	"max-num-batched-tokens":       "serve.max_num_batched_tokens",
	"gpu-memory-utilization":       "serve.gpu_memory_utilization",
	"block-size":                   "serve.block_size",
	"enable-prefix-caching":        "serve.enable_prefix_caching",
	"trust-remote-code":            "serve.trust_remote_code",
	"tokenizer-mode":               "serve.tokenizer_mode",
	"tool-call-parser":             "serve.tool_call_parser",
	"reasoning-parser":             "serve.reasoning_parser",
	"enable-auto-tool-choice":      "serve.enable_auto_tool_choice",
	"language-model-only":          "serve.language_model_only",
	"moe-backend":                  "serve.moe_backend",
	"speculative-config":           "serve.speculative_config",
	"compilation-config":           "serve.compilation_config",
	"attention-config":             "serve.attention_config",
	"kernel-config":                "serve.kernel_config",
	"model":                        "model",
	"port":                         "the runner (each job picks a free port)",
	"host":                         "the runner",
	"nnodes":                       "the runner (from nodes)",
	"node-rank":                    "the runner (one rank per node)",
	"master-addr":                  "the runner (the first allocated host)",
	"headless":                     "the runner (ranks above 0)",
	"distributed-executor-backend": "the runner (mp across nodes)",
}

// flagName normalizes an argv token to vLLM's dashed long name, the way
// vLLM itself does: --max_num_seqs, --max-num-seqs=8 and
// --speculative_config.method=mtp all name their top-level option.
func flagName(tok string) (string, bool) {
	if !strings.HasPrefix(tok, "-") || tok == "-" || tok == "--" {
		return "", false
	}
	name := strings.TrimLeft(tok, "-")
	if i := strings.IndexAny(name, "=."); i >= 0 {
		name = name[:i]
	}
	name = strings.ReplaceAll(name, "_", "-")
	name = strings.TrimPrefix(name, "no-")
	return name, name != ""
}

func (l *loader) pos(v cue.Value, path string) token.Pos {
	if path == "" {
		// The workload itself: its label in the user's file, not the
		// pattern in wlc.cue that types every workload.
		if pos := l.labelPos(v.Path().Selectors()); pos.IsValid() {
			return pos
		}
	}
	p := cue.ParsePath(path)
	if p.Err() != nil {
		return token.NoPos
	}
	for {
		if pos := l.userPos(v.LookupPath(p)); pos.IsValid() {
			return pos
		}
		sels := p.Selectors()
		if len(sels) <= 1 {
			return l.userPos(v.LookupPath(cue.ParsePath("profile")))
		}
		p = cue.MakePath(sels[:len(sels)-1]...)
	}
}

func (l *loader) report(sev diag.Severity, base string, v cue.Value, field, format string, args ...any) {
	pos := l.pos(v, field)
	d := diag.Diagnostic{Severity: sev, Path: base, Message: fmt.Sprintf(format, args...)}
	if field != "" {
		d.Path = base + "." + field
	}
	if pos.IsValid() {
		d.File, d.Line, d.Column = l.rel(pos.Filename()), pos.Line(), pos.Column()
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
	if p.Slurm != nil && p.Runtime == "slurm" && p.Slurm.Gres != "" {
		// --gres=gpu[:type]:N asks N GPUs per node; wlc sizes jobs with
		// gpus_per_node, so both must agree (checked per workload).
		if _, ok := gresCount(p.Slurm.Gres); !ok {
			l.report(diag.Error, base, pv, "slurm.gres", "cannot read the GPU count in gres %q; write gpu[:type]:N", p.Slurm.Gres)
		}
	}
}

// checkFields applies the Go rules that read single fields (env against
// secrets, extra_args against typed flags). They also run on a workload
// that failed validation, decoded as far as it goes, so a broken workload
// shows these errors together with the schema's.
func (l *loader) checkFields(wv cue.Value, w *Workload) {
	base := "workloads." + quoteLabel(w.Name)
	errf := func(field, format string, args ...any) { l.report(diag.Error, base, wv, field, format, args...) }
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
		name, ok := flagName(tok)
		if !ok {
			continue
		}
		if owner, taken := servedFlags[name]; taken {
			errf(fmt.Sprintf("serve.extra_args[%d]", i), "%s is set by %s; remove it from extra_args (the later flag would silently win)", tok, owner)
		}
	}
}

// checkWorkload applies the Go-side rules; it reports whether w is valid.
func (l *loader) checkWorkload(wv cue.Value, w *Workload) bool {
	before := l.res.Diags.Count(diag.Error)
	base := "workloads." + quoteLabel(w.Name)
	errf := func(field, format string, args ...any) { l.report(diag.Error, base, wv, field, format, args...) }
	warnf := func(field, format string, args ...any) { l.report(diag.Warning, base, wv, field, format, args...) }

	if w.LMEval == nil && w.VLLMBench == nil && w.BFCL == nil {
		errf("", "workload runs nothing: define at least one of lm_eval, vllm_bench or bfcl")
	}

	prof, known := l.res.Profiles[w.Profile]
	l.checkFields(wv, w)

	if known {
		l.checkSlurm(wv, base, w, prof)
	}
	l.checkFlags(wv, base, w)
	l.checkDisagg(wv, base, w)

	if w.BFCL != nil && w.Serve.ToolCallParser == "" {
		warnf("bfcl", "bfcl scores tool calls but serve.tool_call_parser is unset, so the server returns tool calls as plain text; set tool_call_parser (and enable_auto_tool_choice)")
	}

	if w.VLLMBench != nil {
		runs := map[string]int{}
		for ci, c := range w.VLLMBench.Configs {
			field := fmt.Sprintf("vllm_bench.configs[%d]", ci)
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

func gresCount(gres string) (int, bool) {
	parts := strings.Split(gres, ":")
	var n int
	if _, err := fmt.Sscanf(parts[len(parts)-1], "%d", &n); err != nil || n < 1 {
		return 0, false
	}
	return n, true
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
