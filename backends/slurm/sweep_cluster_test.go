package slurm_test

import (
	"os"
	"strings"
	"testing"

	"github.com/wlcdev/wlc/internal/testrig/slurmtest"
	"github.com/wlcdev/wlc/internal/testrig/stub"
)

// TestSweepOnCluster submits the MoE backend sweep with the stub server
// refusing triton: the default backend's server runs its bench and custom
// step, then triton's server is started, refused and recorded, and the job
// fails with status 1 naming it; no step is left behind.
func TestSweepOnCluster(t *testing.T) {
	c := slurmtest.Require(t)
	bin := stub.Build(t, t.TempDir())
	r := submit(t, c, bin, "moe_sweep", scripts(t)["moe_sweep"], "WLC_STUB_REFUSE_BACKENDS=triton")
	r.wait(t, c, "FAILED", "1:0")

	servers := r.records_(t, "vllm", "serve")
	if len(servers) != 2 || servers[0].Flags["moe-backend"] != "" || servers[1].Flags["moe-backend"] != "triton" {
		var got []string
		for _, s := range servers {
			got = append(got, s.Flags["moe-backend"])
		}
		t.Fatalf("servers with --moe-backend %q, want [\"\" triton] in that order\n%s", got, r.log(t))
	}
	for _, f := range []string{"moe-default/bench-64-in-8-out-conc-2.json", "moe-default/models.json", "moe-default/server.log"} {
		if _, err := os.Stat(r.file(strings.Split(f, "/")...)); err != nil {
			t.Errorf("%v\n%s", err, r.log(t))
		}
	}
	msg, err := os.ReadFile(r.file("moe-triton", "error.txt"))
	if err != nil || !strings.Contains(string(msg), "ValueError: --moe-backend triton") {
		t.Errorf("moe-triton/error.txt = %q (%v)", msg, err)
	}
	tsv, _ := os.ReadFile(r.file("sweep.tsv"))
	if !strings.Contains(string(tsv), "default\tok\n") || !strings.Contains(string(tsv), "triton\tserver not ready (status 1)") {
		t.Errorf("sweep.tsv:\n%s", tsv)
	}
	if log := r.log(t); !strings.Contains(log, "failed: moe-triton(server not ready)") {
		t.Errorf("the job log does not name the failed backend:\n%s", log)
	}
	r.noLeftovers(t, bin)
}
