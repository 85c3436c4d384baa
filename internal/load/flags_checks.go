package load

import (
	"fmt"
	"strings"

	"cuelang.org/go/cue"

	"github.com/wlcdev/wlc/internal/cmdline"
	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/internal/plan"
)

// checkFlags checks the rendered `vllm serve` and `vllm bench serve` argv
// against the vLLM flag catalog given with --vllm-flags, blaming the typed
// field or the extra_args entry each token came from.
func (l *loader) checkFlags(wv cue.Value, base string, w *Workload) {
	if l.opts.VLLMFlags == nil {
		return
	}
	cat := l.opts.VLLMFlags.For(w.Image)
	serve := plan.ServeArgs(w.Workload).Args[1:] // after the model
	extra := len(w.Serve.ExtraArgs)
	for _, f := range cat.CheckServe(serve) {
		field := "serve"
		if f.Index >= len(serve)-extra {
			if i := f.Index - (len(serve) - extra); i < w.ownExtraArgs() {
				field = "recipe"
			} else {
				field = fmt.Sprintf("serve.extra_args[%d]", i-w.ownExtraArgs())
			}
		} else {
			for j := f.Index; j >= 0; j-- {
				if m, ok := cmdline.VLLMServe.Resolve(serve[j]); ok {
					if m.Flag != nil && strings.HasPrefix(m.Flag.Field, "serve.") {
						field = m.Flag.Field
					}
					break
				}
			}
		}
		l.report(diag.Error, base, wv, field, "%s", f.Message)
	}
	for _, run := range plan.BenchRuns(w.Workload) {
		ci := 0
		for i, c := range w.VLLMBench.Configs {
			if c.Name == run.Config {
				ci = i
			}
		}
		for _, f := range cat.CheckBench(run.Args) {
			l.report(diag.Error, base, wv, fmt.Sprintf("vllm_bench.configs[%d].args", ci), "%s", f.Message)
		}
	}
}
