package plan

import "github.com/wlcdev/wlc/schema"

// ServeArgs renders a workload's `vllm serve` options alone, for checks
// that need the argv before a full resolution (vet's flag catalog check).
func ServeArgs(w schema.Workload) Serve { return serveArgs(w) }

// BenchRuns expands a workload's benchmark configs alone.
func BenchRuns(w schema.Workload) []BenchRun {
	if w.VLLMBench == nil {
		return nil
	}
	return benchRuns(w)
}
