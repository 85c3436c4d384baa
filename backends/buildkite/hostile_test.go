package buildkite_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/backends/buildkite"
	"github.com/wlcdev/wlc/backends/docker"
	"github.com/wlcdev/wlc/backends/goldentest"
	"github.com/wlcdev/wlc/backends/runner/runnertest"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/results/ingest/ingesttest"
	"github.com/wlcdev/wlc/internal/testrig/bktest"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// TestHostileEnvStep: a Buildkite docker step, run as the agent runs a job
// (the real buildkite-agent fetching the step's files and the ingest token
// from the Agent API stand-in; helpers/token.sh, then the docker runner's
// script under the stubs), for a workload whose env is runnertest.Hostile's:
// rows and the token reach only the dashboards the step's environment
// names, untagged; while the server runs no process but curl holds the
// token (token.sh passes a file, never the token, and the script moves it
// into its own); token.sh's file is gone after the step.
func TestHostileEnvStep(t *testing.T) {
	for _, tool := range []string{"curl", "python3", "sha256sum"} {
		testenv.LookPath(t, tool)
	}
	cs := goldentest.Open(t, filepath.Join(testenv.RepoRoot(t), "testdata", "backends", "docker", "sweep.txtar"), nil)
	w := cs.Plans[0]
	w.BFCL = nil
	w.Tools = w.Tools[:1]
	bin := runnertest.Stubs(t)
	sandbox := t.TempDir()
	client := runnertest.ClientEnv(bin, sandbox)
	path := bin + string(os.PathListSeparator) + os.Getenv("PATH")
	pp := ""
	for _, kv := range client {
		if v, ok := strings.CutPrefix(kv, "PYTHONPATH="); ok {
			pp = v
		}
	}
	h := runnertest.NewHostile(t)
	w.Env = append(append([]plan.EnvVar(nil), w.Env...), h.Env(path, pp)...)
	arts := lowerPipelines(t, buildkite.New(map[string]backends.Backend{"docker": docker.Backend{}}), []plan.Workload{w}, nil)
	steps := uploadedSteps(t, bktest.DryRun(t, pipelinesOf(arts)[0].Data, nil))
	pub := publish(t, arts)

	token := fmt.Sprintf("tok-hostile-bk-%d", time.Now().UnixNano())
	srv := ingesttest.New(t, token)
	stubLog := filepath.Join(sandbox, "stub-log")
	extra := append([]string{
		"PATH=" + filepath.Dir(pub.agent) + string(os.PathListSeparator) + path,
		"WLC_STUB_LOG=" + stubLog,
		"WLC_FAKE_DOCKER_STATE=" + filepath.Join(sandbox, "docker-state"),
		"WLC_BENCH_DIR=" + filepath.Join(sandbox, "container-bench"),
		"WLC_POLL_S=0.1",
		"WLC_STOP_TIMEOUT_S=5",
		"HF_TOKEN=hf-secret-value",
		"PERF_INGEST_URL=" + srv.PerfURL(),
		"INGEST_URL=" + srv.EvalURL(),
	}, client...)
	// The agent's secret store holds the token (the step's env has none).
	for _, kv := range srv.AgentEnv() {
		if endpoint, ok := strings.CutPrefix(kv, "BUILDKITE_AGENT_ENDPOINT="); ok {
			pub.api.ProxyTo(endpoint, ingesttest.AgentToken)
			continue
		}
		if !strings.HasPrefix(kv, "BUILDKITE_AGENT_ACCESS_TOKEN=") {
			extra = append(extra, kv)
		}
	}
	stop := runnertest.TokenScan(token)
	r := pub.run(t, steps[0], steps[0].Command, extra...)
	holders, scans := stop()
	j := &runnertest.Job{W: w, StubLog: stubLog}
	runnertest.CheckHolders(t, j, holders, scans)
	h.Check(t, j, srv, runnertest.Result{Code: r.code, Output: r.out})
	if left, _ := filepath.Glob(filepath.Join(r.dir, ".wlc-token.*")); len(left) > 0 {
		t.Errorf("token.sh left its file: %q", left)
	}
}
