package native_test

import (
	"path/filepath"
	"testing"

	"github.com/wlcdev/wlc/backends/native"
	"github.com/wlcdev/wlc/backends/runner/runnertest"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// TestSweepEndToEnd: three servers one after another, FLASH_ATTN refused
// by the server, the others benchmarked and evaluated.
func TestSweepEndToEnd(t *testing.T) {
	t.Parallel()
	runnertest.CheckSweep(t, native.Backend{}, workload(t, "backend_sweep.txtar"), "FLASH_ATTN")
}

// TestCustomStepsEndToEnd: a script beside the server against the live
// server, a command on the host, each with its results kept.
func TestCustomStepsEndToEnd(t *testing.T) {
	t.Parallel()
	runnertest.CheckCustom(t, native.Backend{}, workload(t, "custom_steps.txtar"), map[string]string{
		"custom-models/models.json":   `"Qwen/Qwen3-8B"`,
		"custom-models/model.txt":     "model Qwen/Qwen3-8B",
		"custom-host-probe/probe.txt": "it's $(not) expanded",
	})
}

// TestCustomJobEndToEnd: the team's script runs once in the server's place
// (no server), its arguments and env verbatim, its results kept; a failing
// script fails the job with its status; a host job runs beside the script.
func TestCustomJobEndToEnd(t *testing.T) {
	t.Parallel()
	runnertest.CheckJobs(t, native.Backend{}, filepath.Join(testenv.RepoRoot(t), "testdata", "backends", "native", "custom_job.txtar"))
}
