package buildkite_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wlcdev/wlc/backends/buildkite"
	"github.com/wlcdev/wlc/backends/goldentest"
	"github.com/wlcdev/wlc/backends/runner/runnertest"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/results/dashboard"
	"github.com/wlcdev/wlc/internal/results/ingest/ingesttest"
	"github.com/wlcdev/wlc/internal/testrig/bktest"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// TestProvenanceFromBuildkiteJob (issue 40): a real native-runner step as
// Buildkite runs it. The upload step runs the exported upload.sh with the
// real agent against the Agent API stand-in; the uploaded step's command,
// run as the agent runs a job (the stand-in tools of internal/testrig/stub
// first on PATH, the ingest token in the agent's secret store), downloads
// its script and the shared runtime, checks them and runs the job to its
// end. results/<name>/provenance.json holds the workload's job hash (what
// wlc show prints) and the Buildkite job's id as its run id, and the rows
// sent to the dashboards carry the same hash and the job's build. A
// runtime changed afterwards stops the next job before anything starts.
func TestProvenanceFromBuildkiteJob(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"curl", "python3", "setsid", "sha256sum"} {
		testenv.LookPath(t, tool)
	}
	ws := goldentest.Open(t, filepath.Join(testenv.RepoRoot(t), "testdata", "backends", "native", "sweep.txtar"), nil).Plans
	w := ws[0]
	hash, err := plan.JobHash(w)
	if err != nil {
		t.Fatal(err)
	}
	arts := lowerPipelines(t, buildkite.New(goldenRunners()), ws, nil)
	export := filepath.Join(t.TempDir(), ".wlc-export")
	writeExport(t, export, arts)
	p := newBuild(t)
	if out, err := p.runUpload(t, export, buildkite.UploadStepKey); err != nil {
		t.Fatalf("upload.sh: %v\n%s", err, out)
	}
	pipelines := p.api.Pipelines()
	if len(pipelines) != 1 {
		t.Fatalf("%d pipelines uploaded, want 1", len(pipelines))
	}
	steps := uploadedSteps(t, pipelines[0])
	if len(steps) != 1 {
		t.Fatalf("%d steps uploaded, want 1", len(steps))
	}
	s := steps[0]
	if s.Env["WLC_JOB_HASH"] != hash {
		t.Errorf("the step's WLC_JOB_HASH is %q, want the workload's %s", s.Env["WLC_JOB_HASH"], hash)
	}
	var runtime string
	for _, a := range arts {
		if strings.HasPrefix(a.Path, "helpers/runtime-native-") {
			runtime = a.Path
		}
	}
	if runtime == "" {
		t.Fatal("the export has no native runtime")
	}

	// The dashboards, and the agent's secret store holding their token
	// (behind the Agent API stand-in: the step fetches it, the job's env
	// has none).
	srv := ingesttest.New(t, "tok-buildkite")
	var agentEnv []string
	for _, kv := range srv.AgentEnv() {
		if endpoint, ok := strings.CutPrefix(kv, "BUILDKITE_AGENT_ENDPOINT="); ok {
			p.api.ProxyTo(endpoint, ingesttest.AgentToken)
		} else if !strings.HasPrefix(kv, "BUILDKITE_AGENT_ACCESS_TOKEN=") {
			agentEnv = append(agentEnv, kv)
		}
	}
	// The agent's host: the stand-in tools first on PATH, its own HOME.
	bin := runnertest.Stubs(t)
	sandbox := t.TempDir()
	stubLog := filepath.Join(sandbox, "stub-log")
	base := append([]string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANG=C",
		"WLC_STUB_LOG=" + stubLog, "WLC_POLL_S=0.1", "WLC_STOP_TIMEOUT_S=5",
		"HF_TOKEN=hf-secret-value", "WLC_TEST_SECRET=second-secret",
		"BUILDKITE_BUILD_NUMBER=4242", "NIGHTLY=1",
		dashboard.PerfURLEnv + "=" + srv.PerfURL(), dashboard.EvalURLEnv + "=" + srv.EvalURL(),
	}, runnertest.ClientEnv(bin, sandbox)...)

	before := len(p.api.Downloads())
	r := p.runWith(t, s, s.Command, base, agentEnv...)
	if r.err != nil {
		t.Fatalf("the step failed: %v\n%s", r.err, r.out)
	}
	fetched := slices.Sorted(slices.Values(p.api.Downloads()[before:]))
	if want := []string{runtime, "helpers/token.sh", "scripts/" + w.Name + ".sh"}; !slices.Equal(fetched, want) {
		t.Errorf("the step downloaded %q, want %q", fetched, want)
	}
	jobID := ""
	for _, kv := range r.env {
		if v, ok := strings.CutPrefix(kv, "BUILDKITE_JOB_ID="); ok {
			jobID = v
		}
	}

	j := &runnertest.Job{W: w, Dir: r.dir, StubLog: stubLog}
	j.CheckProvenance(t, hash, 0)
	var prov struct {
		RunID    string `json:"run_id"`
		Workload string `json:"workload"`
	}
	data, err := os.ReadFile(filepath.Join(j.Results(), "provenance.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &prov); err != nil {
		t.Fatal(err)
	}
	if prov.RunID != jobID || prov.Workload != w.Name {
		t.Errorf("provenance.json: run_id %q, workload %q; want the Buildkite job's id %q and %s", prov.RunID, prov.Workload, jobID, w.Name)
	}
	j.CheckBenchResults(t)
	j.CheckEvalResults(t)
	j.CheckIngest(t, srv, false)
	j.CheckTagged(t, srv, "4242")
	// The rows trace back to this provenance.json: its job hash, and on
	// eval rows the job's build.
	for _, kind := range []string{"perf", "eval"} {
		rows := srv.Rows(kind)
		if len(rows) == 0 {
			t.Errorf("no %s rows reached the dashboards", kind)
		}
		for _, row := range rows {
			if got := row.Body["job_hash"]; got != hash {
				t.Errorf("%s row's job_hash %v, want %s: %s", kind, got, hash, row.Raw)
			}
			if got := row.Body["buildkite_build_id"]; kind == "eval" && got != bktest.AgentAPIBuild {
				t.Errorf("eval row's buildkite_build_id %v, want the job's build %s: %s", got, bktest.AgentAPIBuild, row.Raw)
			}
		}
	}
	j.NoProcessLeft(t)

	// The runtime's artifact changed since the export (tampered storage, a
	// newer export's upload): the next job of the step stops at the check.
	if p.api.Tamper(runtime, []byte("touch tampered-runtime-ran\n")) != 1 {
		t.Fatalf("no artifact %s", runtime)
	}
	r = p.runWith(t, s, s.Command, base, agentEnv...)
	if r.err == nil || !strings.Contains(r.out, ".wlc/"+runtime+": FAILED") {
		t.Fatalf("the step ran with a tampered runtime: %v\n%s", r.err, r.out)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "tampered-runtime-ran")); err == nil {
		t.Error("the tampered runtime ran")
	}
	if _, err := os.Stat(filepath.Join(r.dir, "results")); err == nil {
		t.Error("the refused job wrote results")
	}
}
