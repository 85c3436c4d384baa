package docker_test

import (
	"testing"

	"github.com/wlcdev/wlc/backends/docker"
	"github.com/wlcdev/wlc/backends/runner/runnertest"
)

// TestSweepEndToEnd: three servers one after another, FLASH_ATTN refused
// by the server, the others benchmarked and evaluated.
func TestSweepEndToEnd(t *testing.T) {
	t.Parallel()
	runnertest.CheckSweep(t, docker.Backend{}, workload(t, "backend_sweep.txtar"), "FLASH_ATTN")
}

// TestCustomStepsEndToEnd: a script in the container against the live
// server, a command on the host, each with its results kept.
func TestCustomStepsEndToEnd(t *testing.T) {
	t.Parallel()
	runnertest.CheckCustom(t, docker.Backend{}, workload(t, "custom_steps.txtar"), map[string]string{
		"custom-models/models.json":   `"Qwen/Qwen3-8B"`,
		"custom-models/model.txt":     "model Qwen/Qwen3-8B",
		"custom-host-probe/probe.txt": "it's $(not) expanded",
	})
}
