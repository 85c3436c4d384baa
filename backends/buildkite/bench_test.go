package buildkite_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/wlcdev/wlc/backends/buildkite"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkLower1000 is the export's part after the load: 1,000 resolved
// workloads (the nightly golden's, replicated) lowered into pipelines, the
// runners' scripts included. It reports the process's CPU time per
// lowering (user+sys, the GC included: less noisy than wall time on a
// shared machine), the pipeline bytes per step (what Buildkite stores and
// shows) and the export's bytes per step (the scripts included).
func BenchmarkLower1000(b *testing.B) {
	ws := replicate(nightlyPlans(b), 1000)
	bk := buildkite.New(goldenRunners())
	var pipelineSize, size, n int
	start := cpuTime()
	for b.Loop() {
		arts := lowerPipelines(b, bk, ws, nil)
		pipelineSize, size = 0, 0
		for _, a := range arts {
			size += len(a.Data)
			if isPipeline(a) {
				pipelineSize += len(a.Data)
			}
		}
		n++
	}
	b.ReportMetric(float64((cpuTime()-start).Milliseconds())/float64(n), "cpu-ms/op")
	b.ReportMetric(float64(pipelineSize)/float64(len(ws)), "pipeline-B/step")
	b.ReportMetric(float64(size)/float64(len(ws)), "export-B/step")
}
