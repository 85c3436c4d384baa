package check

import (
	"fmt"
	"strings"

	"github.com/wlcdev/wlc/internal/engine/cmdline"
	"github.com/wlcdev/wlc/internal/engine/vllmflags"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/schema"
)

// flags checks the rendered `vllm serve` and `vllm bench serve` argv
// against the vLLM flag catalog of the image the workload runs, blaming
// the typed field or the extra_args entry each token came from.
func (fs *findings) flags(w *Workload, env *Env) {
	if env.VLLMFlags == nil || w.Engine == schema.EngineSGLang {
		return // the catalogs are vLLM's; SGLang's argv is checked by engine
	}
	cat := Catalog(w, env)
	msg := func(f vllmflags.Finding) string {
		if cat.StandIn == "" {
			return f.Message
		}
		return f.Message + " [" + cat.StandIn + "]"
	}
	check := func(prefix string, serve []string, extra, own int) {
		for _, f := range cat.CheckServe(serve) {
			field := "serve"
			switch {
			case f.Index >= len(serve)-extra:
				if i := f.Index - (len(serve) - extra); i < own {
					field = "recipe"
				} else {
					field = fmt.Sprintf("serve.extra_args[%d]", i-own)
				}
			default:
				for j := f.Index; j >= 0; j-- {
					if m, ok := cmdline.VLLMServe.Resolve(serve[j]); ok {
						if m.Flag != nil && strings.HasPrefix(m.Flag.Field, "serve.") {
							field = m.Flag.Field
						} else if m.Option == "--kv-transfer-config" {
							field = "kv_transfer"
						}
						break
					}
				}
			}
			fs.errorf(prefix+field, "%s", msg(f))
		}
	}
	check("", plan.ServeArgs(w.Workload).Args[1:], len(w.Serve.ExtraArgs), w.Own)
	if d := w.Disagg; d != nil {
		// Each role's own options, and the KV transfer config wlc renders
		// from its kv_transfer (its keys are KVTransferConfig's).
		for _, r := range []struct {
			name string
			role schema.DisaggRole
		}{{"prefill", d.Prefill}, {"decode", d.Decode}} {
			argv := plan.ServeArgs(schema.Workload{Model: w.Model, Serve: r.role.Serve}).Args[1:]
			extra := len(r.role.Serve.ExtraArgs)
			if r.role.KVTransfer != nil {
				typed := append([]string(nil), argv[:len(argv)-extra]...)
				typed = append(typed, "--kv-transfer-config", plan.KVTransferConfig(r.role.KVTransfer))
				argv = append(typed, argv[len(argv)-extra:]...)
			}
			check("disagg."+r.name+".", argv, extra, 0)
		}
	}
	for _, run := range plan.BenchRuns(w.Workload) {
		// The config the run came from, else the sweep.
		field, args := "vllm_bench.sweep.args", map[string]any(nil)
		if sw := w.VLLMBench.Sweep; sw != nil {
			args = sw.Args
		}
		for i, c := range w.VLLMBench.Configs {
			if c.Name == run.Config {
				field, args = fmt.Sprintf("vllm_bench.configs[%d].args", i), c.Args
			}
		}
		for _, f := range cat.CheckBench(run.Args) {
			at := field
			// Blame the args key the option came from.
			name, _, _ := strings.Cut(run.Args[f.Index], "=")
			for k := range args {
				if "--"+plan.BenchArgName(k) == name {
					at += "." + Label(k)
				}
			}
			fs.errorf(at, "%s", msg(f))
		}
	}
}
