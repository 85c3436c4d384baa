package runner_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wlcdev/wlc/backends/runner"
	"github.com/wlcdev/wlc/internal/plan"
)

// exitStatus runs the library's wlc_exit_status as the EXIT trap would
// for a job ending with rc, after the server died with death (empty: it
// did not) with log as its server log, and returns the status and output.
func exitStatus(t *testing.T, rc int, death, log string, failed int) (string, string) {
	t.Helper()
	dir := t.TempDir()
	logFile := filepath.Join(dir, "server.log")
	if err := os.WriteFile(logFile, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	script := "set -euo pipefail\n" + runner.Library(plan.Workload{}) +
		fmt.Sprintf("\nWLC_SERVER_LOG=%q\nWLC_SERVER_RC=%q\nfor ((i = 0; i < %d; i++)); do WLC_FAILED+=(step$i); done\n", logFile, death, failed)
	if death != "" {
		script += "wlc_server_died\n"
	}
	script += fmt.Sprintf("wlc_exit_status %d\necho \"$WLC_EXIT\"\n", rc)
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1], string(out)
}

// TestExitClasses: a server that died on its own with a log showing an
// infrastructure cause (the real messages of PyTorch, NCCL, the NVIDIA
// runtime, Slurm) gives that cause's status; a workload failure keeps its
// own status, and one that collides with an infrastructure status becomes
// 1 (never retried).
func TestExitClasses(t *testing.T) {
	for _, c := range []struct {
		name, death, log string
		rc, failed       int
		want             string
	}{
		{"oom while loading", "1", "INFO loading weights\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB\n", 1, 0, "92"},
		{"nccl", "1", "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\nncclSystemError: System call (e.g. socket, malloc) or external library call failed\n", 1, 0, "93"},
		{"no gpu", "1", "RuntimeError: No CUDA GPUs are available\n", 1, 0, "91"},
		{"gpu runtime", "125", "docker: Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]].\n", 125, 0, "91"},
		{"killed", "137", "INFO Loading safetensors checkpoint shards: 40% Completed\n", 137, 0, "94"},
		{"died under a step", "137", "", 1, 1, "94"},
		{"bad flag", "2", "vllm serve: error: unrecognized arguments: --no-such-flag\n", 2, 0, "2"},
		{"failed step, server alive", "", "torch.OutOfMemoryError: CUDA out of memory\n", 1, 1, "1"},
		{"died after a workload failure", "137", "", 65, 2, "65"},
		{"workload status 92", "", "", 92, 1, "1"},
		{"invalid results", "", "", 65, 1, "65"},
		{"passed", "", "", 0, 0, "0"},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			got, out := exitStatus(t, c.rc, c.death, c.log, c.failed)
			if got != c.want {
				t.Errorf("exit %s, want %s:\n%s", got, c.want, out)
			}
			if c.rc != 0 && !strings.Contains(out, "exit class: ") {
				t.Errorf("no exit class line:\n%s", out)
			}
		})
	}
}

// TestInvalidResultsStatus: the result tools exit with the status wlc
// documents for results that are not true.
func TestInvalidResultsStatus(t *testing.T) {
	for _, f := range []string{"results.py", "bfcl.py"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`(?m)^INVALID = (\d+)$`).FindSubmatch(data)
		if m == nil || string(m[1]) != fmt.Sprint(runner.InvalidResults) {
			t.Errorf("%s: INVALID is %q, want %d (runner.InvalidResults)", f, m, runner.InvalidResults)
		}
	}
}
