package slurm_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/wlcdev/wlc/internal/testrig/slurmtest"
	"github.com/wlcdev/wlc/internal/testrig/stub"
)

// TestRequeueOnCluster: a 1-node job whose server runs out of memory
// while loading (an infrastructure failure) requeues itself twice, then
// fails with the out-of-memory status (92); its log keeps every run's,
// and its provenance.json says which class it was.
func TestRequeueOnCluster(t *testing.T) {
	c := slurmtest.Require(t)
	bin := stub.Build(t, t.TempDir())
	r := submit(t, c, bin, "one_node", scripts(t)["one_node"], "WLC_STUB_FAULT=oom-loading")
	// Slurm holds a requeued batch job back for a while (its BeginTime);
	// the test lets it start at once instead of waiting minutes.
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(200 * time.Millisecond):
			}
			// (Not c.Job: it may end the test, which only its goroutine may.)
			out, _ := exec.Command("scontrol", "show", "job", "-o", r.id).Output()
			if strings.Contains(string(out), "JobState=PENDING") && strings.Contains(string(out), "Reason=BeginTime") {
				_ = exec.Command("scontrol", "update", "JobId="+r.id, "StartTime=now").Run()
			}
		}
	}()
	r.wait(t, c, "FAILED", "92:0")
	if n := len(r.records_(t, "vllm", "serve")); n != 3 {
		t.Errorf("%d server starts, want 3 (the first run and two requeues)\n%s", n, r.log(t))
	}
	log := r.log(t)
	for _, want := range []string{"requeued job " + r.id + " (requeue 1 of 2)", "requeued job " + r.id + " (requeue 2 of 2)",
		"not requeued: job " + r.id + " ran 3 times", "exit class: infrastructure (status 92; the pipeline retries it): torch.OutOfMemoryError: CUDA out of memory"} {
		if !strings.Contains(log, want) {
			t.Errorf("the job's log lacks %q:\n%s", want, log)
		}
	}
	data, err := os.ReadFile(r.file("provenance.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		JobHash    string `json:"job_hash"`
		ExitStatus int    `json:"exit_status"`
		ExitClass  string `json:"exit_class"`
		Phases     []struct{ Name string }
	}
	if err := json.Unmarshal(data, &p); err != nil || p.JobHash != scriptJobHash(t, "one_node") || p.ExitStatus != 92 || p.ExitClass != "infrastructure" {
		t.Errorf("provenance.json (%v): %s", err, data)
	}
}
