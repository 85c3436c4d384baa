package buildkite_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/backends/buildkite"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/testrig/bktest"
	"github.com/wlcdev/wlc/schema"
)

func optsEnv(env map[string]string) backends.Options {
	return backends.Options{Env: env, WorkloadsDir: "workloads"}
}

func slurmWorkload(name string) plan.Workload {
	w := dockerWorkload(name)
	w.Profile = schema.Profile{Name: "GB300", Runtime: "slurm", Queue: "gb300-slurm", Slurm: &schema.SlurmCluster{MaxNodes: 2}}
	w.Nodes, w.GPUsPerNode, w.GPUs = 2, 4, 8
	return w
}

func TestNightlyByDefault(t *testing.T) {
	var b backends.Backend = buildkite.New(nil)
	nd, ok := b.(interface{ NightlyByDefault() bool })
	if !ok || !nd.NightlyByDefault() {
		t.Fatal("buildkite must export the nightly set when nothing is selected")
	}
	if b.Name() != "buildkite" {
		t.Fatalf("Name() = %q", b.Name())
	}
}

// TestMissingRunnerRefused: a profile whose runner backend is not wired is
// an export error naming the runner, never a step without a script; every
// failing workload is reported.
func TestMissingRunnerRefused(t *testing.T) {
	b := buildkite.New(map[string]backends.Backend{"docker": fakeRunner{"docker"}})
	_, err := b.Lower([]plan.Workload{slurmWorkload("kimi"), dockerWorkload("ok"), k8sWorkload("pod", "nvidia")}, optsEnv(nil))
	if err == nil {
		t.Fatal("Lower succeeded without slurm and native runners")
	}
	for _, want := range []string{
		"kimi: profile GB300 (runtime slurm) runs the slurm runner's script, but this wlc has no slurm backend wired into buildkite (available: docker)",
		"pod: profile B200 (runtime k8s) runs the native runner's script, but this wlc has no native backend wired into buildkite (available: docker)",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "ok:") {
		t.Errorf("error %q blames the docker workload", err)
	}
}

type failingRunner struct{ n int }

func (failingRunner) Name() string    { return "docker" }
func (failingRunner) Summary() string { return "" }
func (f failingRunner) Lower(ws []plan.Workload, _ backends.Options) ([]backends.Artifact, error) {
	if f.n < 0 {
		return nil, errors.New("cannot render")
	}
	var out []backends.Artifact
	for i := 0; i < f.n; i++ {
		out = append(out, backends.Artifact{Path: "f", Data: []byte("true\n")})
	}
	return out, nil
}

func TestRunnerFailures(t *testing.T) {
	for _, tc := range []struct {
		r    failingRunner
		want string
	}{
		{failingRunner{-1}, "w: docker runner: cannot render"},
		{failingRunner{2}, "w: docker runner produced 2 files for one workload"},
		{failingRunner{0}, "w: docker runner produced 0 files"},
	} {
		_, err := buildkite.New(map[string]backends.Backend{"docker": tc.r}).Lower([]plan.Workload{dockerWorkload("w")}, optsEnv(nil))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Lower: %v, want %q", err, tc.want)
		}
	}
}

func TestEmptySelectionRefused(t *testing.T) {
	if _, err := buildkite.New(fakeRunners()).Lower(nil, optsEnv(nil)); err == nil {
		t.Fatal("Lower(nil) succeeded")
	}
}

// TestSlurmStep: with a Slurm runner wired, the step runs on the login-node
// queue, one job per queue at a time, and submits the script through the
// wrapper (sbatch --wait; slurm_test.go runs it on a cluster).
func TestSlurmStep(t *testing.T) {
	env := map[string]string{"GB300_QUEUE": "gb300-canary"}
	y := lowerPipeline(t, buildkite.New(fakeRunners()), []plan.Workload{slurmWorkload("kimi")}, env)
	bktest.ValidateSchema(t, y)
	bktest.RoundTrip(t, y)
	for _, want := range []string{
		"\n    agents:\n      queue: gb300-canary\n",
		"\n    concurrency: 1\n    concurrency_group: wlc/gb300-canary\n    concurrency_method: eager\n",
		"\n      buildkite-agent artifact download scripts/kimi.sh .wlc --step wlc-upload\n",
		"\n      buildkite-agent artifact download helpers/submit.sh .wlc --step wlc-upload\n",
		"\n      buildkite-agent artifact download helpers/token.sh .wlc --step wlc-upload\n",
		// The ingest token is fetched on the login node; sbatch hands it to
		// the job.
		"\n      bash .wlc/helpers/token.sh bash .wlc/helpers/submit.sh .wlc/scripts/kimi.sh results/kimi\n",
	} {
		if !strings.Contains(string(y), want) {
			t.Errorf("pipeline lacks %q:\n%s", want, y)
		}
	}
	if strings.Contains(string(y), "plugins:") {
		t.Errorf("a Slurm step has no plugin:\n%s", y)
	}
}

// TestOverrides: <PROFILE>_QUEUE (profile name upper-cased, other
// characters as _), agent tags after the queue, <PROFILE>_HF_CACHE_VOLUME
// validation.
func TestOverrides(t *testing.T) {
	w := dockerWorkload("w")
	w.Profile.Name = "xpu-arc.b70"
	w.Hardware.Name = "ARC_PRO_B70"
	w.Profile.AgentTags = map[string]string{"mem": "32+", "gpu": "1+"}
	y := lowerPipeline(t, buildkite.New(fakeRunners()), []plan.Workload{w}, map[string]string{"XPU_ARC_B70_QUEUE": "  intel-canary "})
	if want := "\n    agents:\n      queue: intel-canary\n      gpu: 1+\n      mem: 32+\n"; !strings.Contains(string(y), want) {
		t.Errorf("pipeline lacks %q:\n%s", want, y)
	}
	if !strings.HasPrefix(strings.SplitN(string(y), "\n", 3)[2], "  - label: ':buildkite: w'") {
		t.Errorf("unknown GPU should get :buildkite::\n%s", y)
	}

	w.Profile.AgentTags = map[string]string{"queue": "x"}
	if _, err := buildkite.New(fakeRunners()).Lower([]plan.Workload{w}, optsEnv(nil)); err == nil || !strings.Contains(err.Error(), "agent_tags must not set queue") {
		t.Errorf("agent_tags queue: %v", err)
	}

	k := k8sWorkload("k", "amd")
	for _, tc := range []struct{ val, want string }{
		{`{"persistentVolumeClaim": {"claimName": "hf"`, "MI355X_HF_CACHE_VOLUME is not JSON"},
		{`["emptyDir"]`, "MI355X_HF_CACHE_VOLUME must be a Kubernetes volume source object"},
		{`{"name": "x", "emptyDir": {}}`, `remove "name"`},
	} {
		_, err := buildkite.New(fakeRunners()).Lower([]plan.Workload{k}, optsEnv(map[string]string{"MI355X_HF_CACHE_VOLUME": tc.val}))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("MI355X_HF_CACHE_VOLUME=%s: %v, want %q", tc.val, err, tc.want)
		}
	}
}

// TestSecretsByName: the uploader's secret values never reach the pipeline
// (the agent would warn, DryRun fails on that); HF_TOKEN is a secretKeyRef
// only when the workload passes HF_TOKEN.
func TestSecretsByName(t *testing.T) {
	env := map[string]string{"HF_TOKEN": "hf_abcdefghijklmnop", "VLLM_IMAGE": "vllm/vllm-openai:nightly"}
	k := k8sWorkload("k", "nvidia")
	y := lowerPipeline(t, buildkite.New(fakeRunners()), []plan.Workload{k}, env)
	bktest.DryRun(t, y, env)
	if !strings.Contains(string(y), "secretKeyRef:\n") {
		t.Errorf("no secretKeyRef for HF_TOKEN:\n%s", y)
	}
	k.Secrets = nil
	y = lowerPipeline(t, buildkite.New(fakeRunners()), []plan.Workload{k}, env)
	if strings.Contains(string(y), "HF_TOKEN") {
		t.Errorf("HF_TOKEN in a pod of a workload that does not pass it:\n%s", y)
	}
}

// TestSkippedStep: a skipped step (perf-eval #63) keeps its command but has
// no pod, so nothing pulls an image the build does not provide.
func TestSkippedStep(t *testing.T) {
	k := k8sWorkload("k", "amd")
	k.Image.Skip = "no ROCM image: set VLLM_IMAGE_ROCM"
	y := lowerPipeline(t, buildkite.New(fakeRunners()), []plan.Workload{k}, nil)
	if !strings.Contains(string(y), "\n    skip: 'no ROCM image: set VLLM_IMAGE_ROCM'\n") || strings.Contains(string(y), "plugins:") {
		t.Errorf("skipped step:\n%s", y)
	}
	bktest.DryRun(t, y, nil)
}
