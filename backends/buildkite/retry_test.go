package buildkite_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wlcdev/wlc/backends/buildkite"
	"github.com/wlcdev/wlc/backends/goldentest"
	"github.com/wlcdev/wlc/backends/runner"
	"github.com/wlcdev/wlc/backends/runner/runnertest"
	"github.com/wlcdev/wlc/internal/testrig/bktest"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

func TestMain(m *testing.M) { os.Exit(runnertest.Main(m)) }

// TestRetryInfrastructureOnly: the docker job whose image pull fails
// exits with an infrastructure status, which the step's automatic retry
// (as the real agent uploads it) retries, twice; the job whose image's
// vLLM lacks a flag it passes exits with a workload status, which no rule
// retries.
func TestRetryInfrastructureOnly(t *testing.T) {
	testenv.LookPath(t, "curl")
	testenv.LookPath(t, "python3")
	ws := goldentest.Open(t, filepath.Join(testenv.RepoRoot(t), "testdata", "backends", "docker", "sweep.txtar"), nil).Plans
	w := ws[0]
	runners := goldenRunners()
	steps := uploadedSteps(t, bktest.DryRun(t, lowerPipeline(t, buildkite.New(runners), ws, nil), nil))
	if len(steps) != 1 {
		t.Fatalf("%d steps, want 1", len(steps))
	}
	// retried is the limit of the rule matching status, 0 when none does.
	retried := func(status int) int {
		for _, r := range steps[0].Retry.Automatic {
			if r.ExitStatus == float64(status) {
				return r.Limit
			}
		}
		return 0
	}
	for _, s := range runner.InfraStatuses() {
		if retried(s) != 2 {
			t.Errorf("infrastructure status %d: retried %d times, want 2 (rules %+v)", s, retried(s), steps[0].Retry.Automatic)
		}
	}
	if n, want := len(steps[0].Retry.Automatic), len(runner.InfraStatuses()); n != want {
		t.Errorf("%d retry rules, want one per infrastructure status (%d): %+v", n, want, steps[0].Retry.Automatic)
	}

	opt := runner.ServeOptions(w)[0]
	for _, c := range []struct {
		name  string
		env   []string
		retry bool
		line  string
	}{
		{"pull fails", []string{"WLC_FAKE_DOCKER_PULL_FAIL=1"}, true, "exit class: infrastructure (status 90; the pipeline retries it): Error response from daemon: pull access denied for "},
		{"flag the image lacks", []string{"WLC_STUB_VLLM_LACKS=" + opt}, false, "exit class: workload (status 2; not retried)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			j := runnertest.NewJob(t, runners["docker"], w, c.env...)
			res := j.Run(t, 3*time.Minute)
			if res.Code == 0 || (retried(res.Code) > 0) != c.retry {
				t.Errorf("exit %d: retried %d times by the step, want retried: %v\n%s", res.Code, retried(res.Code), c.retry, res.Output)
			}
			if !strings.Contains(res.Output, c.line) {
				t.Errorf("output lacks %q:\n%s", c.line, res.Output)
			}
		})
	}
}
