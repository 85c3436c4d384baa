package slurm_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wlcdev/wlc/backends/goldentest"
	"github.com/wlcdev/wlc/backends/runner/runnertest"
	"github.com/wlcdev/wlc/backends/slurm"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/results/ingest/ingesttest"
	"github.com/wlcdev/wlc/internal/testrig/slurmtest"
	"github.com/wlcdev/wlc/internal/testrig/stub"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// TestHostileEnvOnCluster: the one-node job with runnertest.Hostile's env
// (every variable the batch script, its srun steps' commands and its
// tools read) on the local cluster, the dashboards and their token in the
// submitting environment (sbatch hands them to the job): rows and token
// reach only the configured dashboards, untagged; the server step still
// gets the whole env; and while the job runs no process on the nodes but
// curl holds the token (the batch shell's environment, which srun copies
// into every step, included).
func TestHostileEnvOnCluster(t *testing.T) {
	c := slurmtest.Require(t)
	bin := stub.Build(t, t.TempDir())
	cs := goldentest.Open(t, filepath.Join(testenv.RepoRoot(t), "testdata", "backends", "slurm", "one_node.txtar"), slurm.New())
	w := cs.Plans[0]
	token := fmt.Sprintf("tok-hostile-slurm-%d", time.Now().UnixNano())
	srv := ingesttest.New(t, token)
	h := runnertest.NewHostile(t)
	path := strings.TrimPrefix(slurmtest.ExportPath(bin), "--export=ALL,PATH=")
	w.Env = append(append([]plan.EnvVar(nil), w.Env...), h.Env(path, stub.Python(bin, filepath.Join(t.TempDir(), "pip-site")))...)
	arts, err := slurm.New().Lower([]plan.Workload{w}, cs.Opts)
	if err != nil || len(arts) != 1 {
		t.Fatalf("lowering: %v (%d artifacts)", err, len(arts))
	}
	script := filepath.Join(t.TempDir(), "one_node.sbatch")
	if err := os.WriteFile(script, arts[0].Data, 0o755); err != nil {
		t.Fatal(err)
	}
	// The cluster's daemons keep the job's submitted environment (Slurm's
	// own state, not the job's processes).
	stop := runnertest.TokenScan(token, "slurmctld", "slurmd", "slurmscriptd", "slurmdbd")
	r := submit(t, c, bin, "one_node", script, srv.Env()...)
	state, code := c.Wait(t, r.id, jobTimeout)
	holders, scans := stop()
	res := runnertest.Result{Output: r.log(t)}
	if state != "COMPLETED" || code != "0:0" {
		res.Code = 1
	}
	j := &runnertest.Job{W: w, StubLog: r.records}
	runnertest.CheckHolders(t, j, holders, scans)
	h.Check(t, j, srv, res)
	r.noLeftovers(t, bin)
}
