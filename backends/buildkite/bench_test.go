package buildkite_test

import (
	"testing"

	"github.com/wlcdev/wlc/backends/buildkite"
)

// BenchmarkLower1000 is the export's part after the load: 1,000 resolved
// workloads (the nightly golden's, replicated) lowered into pipelines, the
// runners' scripts included. It reports the pipeline bytes per step.
func BenchmarkLower1000(b *testing.B) {
	ws := replicate(nightlyPlans(b), 1000)
	bk := buildkite.New(goldenRunners())
	var size int
	for b.Loop() {
		arts := lowerPipelines(b, bk, ws, nil)
		size = 0
		for _, a := range arts {
			size += len(a.Data)
		}
	}
	b.ReportMetric(float64(size)/float64(len(ws)), "B/step")
}
