package docker_test

import (
	"testing"

	"github.com/wlcdev/wlc/backends/docker"
	"github.com/wlcdev/wlc/backends/runner/runnertest"
)

// TestHostileEnv: as native's, on docker: the workload's env is no longer
// the container's, so what docker exec runs there for the job (the
// preflight's bash, results.py, ingest.py, pip) does not read it either.
func TestHostileEnv(t *testing.T) {
	t.Parallel()
	w := workload(t, "sweep.txtar")
	w.BFCL = nil
	w.Tools = w.Tools[:1]
	runnertest.RunHostile(t, docker.Backend{}, w, jobTimeout)
}
