package buildkite_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/backends/buildkite"
	"github.com/wlcdev/wlc/backends/runner/runnertest"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/testrig/bktest"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// writeExport writes an export's artifacts into dir, as `wlc export -o dir`.
func writeExport(t testing.TB, dir string, arts []backends.Artifact) {
	t.Helper()
	for _, a := range arts {
		p := filepath.Join(dir, filepath.FromSlash(a.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, a.Data, a.Mode); err != nil {
			t.Fatal(err)
		}
	}
}

// runUpload runs the export's upload.sh as the upload step's job (step key
// key) does: from the checkout, the real agent on PATH, against the build's
// Agent API stand-in.
func (p *published) runUpload(t testing.TB, export string, key string) (string, error) {
	t.Helper()
	job := p.upload
	if key != job.StepKey {
		job = bktest.Job{ID: "0193-other-upload-job", StepKey: key, Label: "other"}
		p.api.AddJob(job)
	}
	cmd := exec.Command("bash", filepath.Join(export, buildkite.UploadFile))
	cmd.Dir = filepath.Dir(export)
	cmd.Env = append([]string{"PATH=" + filepath.Dir(p.agent) + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=/home/uploader", "LANG=C"}, p.api.Env(job)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestUploadAndRunSteps is the whole Buildkite path with the real
// buildkite-agent against the Agent API stand-in: the upload step runs the
// exported upload.sh (artifact upload of the scripts, then each pipeline;
// two here, one step each), and each uploaded step's command, as the agent
// hands it to bash, downloads exactly its own files, checks them and runs
// its script (the docker one sourcing its shared runtime, downloaded and
// checked beside it). A script or a runtime changed after the export is
// refused before anything runs, and so is an upload step whose key the
// steps do not name.
func TestUploadAndRunSteps(t *testing.T) {
	ws := []plan.Workload{
		dockerWorkload("up_docker", plan.EnvVar{Name: "WEIRD", Value: weird}),
		k8sWorkload("up_k8s", "nvidia", plan.EnvVar{Name: "WEIRD", Value: weird}),
	}
	env := map[string]string{buildkite.JobsPerUploadVar: "1", "HOME": "/home/uploader", "X": "from-uploader"}
	runners := fakeRunners()
	runners["docker"] = fakeSplitter{fakeRunner{"docker"}}
	arts := lowerPipelines(t, buildkite.New(runners), ws, env)
	export := filepath.Join(t.TempDir(), ".wlc-export")
	writeExport(t, export, arts)

	p := newBuild(t)
	// The upload step's key is not the one the steps download from.
	if out, err := p.runUpload(t, export, "pipeline-upload"); err == nil ||
		!strings.Contains(out, "wlc: the exported steps download their scripts from the step with key wlc-upload, but this step's key is 'pipeline-upload'") {
		t.Fatalf("upload.sh under another step key: %v\n%s", err, out)
	}
	if n := len(p.api.Artifacts()) + len(p.api.Pipelines()); n != 0 {
		t.Fatalf("upload.sh under another step key uploaded %d things", n)
	}

	if out, err := p.runUpload(t, export, buildkite.UploadStepKey); err != nil {
		t.Fatalf("upload.sh: %v\n%s", err, out)
	}
	if u := p.api.Unhandled(); len(u) > 0 {
		t.Errorf("the agent made requests the stand-in does not serve: %q", u)
	}
	got := p.api.Artifacts()
	var want []string
	for _, a := range arts {
		if buildkite.IsStepFile(a.Path) {
			want = append(want, a.Path)
			if !bytes.Equal(got[a.Path], a.Data) {
				t.Errorf("artifact %s differs from the export's file", a.Path)
			}
		}
	}
	if len(got) != len(want) {
		t.Errorf("the upload step uploaded %d artifacts, want %q", len(got), want)
	}
	pipelines := p.api.Pipelines()
	if len(pipelines) != 2 {
		t.Fatalf("%d pipelines uploaded, want 2 (one step per upload)", len(pipelines))
	}
	var steps []uploadedStep
	for _, pl := range pipelines {
		steps = append(steps, uploadedSteps(t, pl)...)
	}
	for i, s := range steps {
		w := ws[i]
		before := len(p.api.Downloads())
		out := filepath.Join(t.TempDir(), "seen")
		r := p.run(t, s, s.Command, "WLC_FAKE_OUT="+out)
		if r.err != nil {
			t.Fatalf("%s: the step failed: %v\n%s", w.Name, r.err, r.out)
		}
		if seen, err := os.ReadFile(out); err != nil || !strings.Contains(string(seen), "WEIRD="+weird+"\n") {
			t.Errorf("%s: the script did not run with the workload's env: %v\n%s", w.Name, err, seen)
		}
		fetched := p.api.Downloads()[before:]
		slices.Sort(fetched)
		wantFetched := []string{"helpers/token.sh", "scripts/" + w.Name + ".sh"}
		if i == 0 {
			wantFetched = []string{"helpers/runtime-fake-docker.sh", "helpers/token.sh", "scripts/" + w.Name + ".sh"}
		}
		if !slices.Equal(fetched, wantFetched) {
			t.Errorf("%s: the step downloaded %q, want %q", w.Name, fetched, wantFetched)
		}
		if ran := strings.Contains(r.out, fakeRuntimeRan); ran != (i == 0) {
			t.Errorf("%s: the shared runtime ran: %v, want %v\n%s", w.Name, ran, i == 0, r.out)
		}
	}

	// A retry is a new job of the same step: the same files, the same run.
	if r := p.run(t, steps[0], steps[0].Command, "WLC_FAKE_OUT="+filepath.Join(t.TempDir(), "seen")); r.err != nil {
		t.Fatalf("the retried step failed: %v\n%s", r.err, r.out)
	}

	// Storage tampered with (or a newer export's upload re-run): the step
	// stops before running anything, whether the runtime or the script
	// changed.
	for _, f := range []string{"helpers/runtime-fake-docker.sh", "scripts/" + ws[0].Name + ".sh"} {
		if p.api.Tamper(f, []byte("#!/usr/bin/env bash\ntouch tampered-file-ran\n")) != 1 {
			t.Fatalf("no artifact %s to tamper with", f)
		}
		r := p.run(t, steps[0], steps[0].Command)
		if r.err == nil {
			t.Fatalf("the step ran a tampered %s:\n%s", f, r.out)
		}
		for _, want := range []string{".wlc/" + f + ": FAILED", "wlc: refusing to run files that are not the ones this step was exported with (sha256 above)"} {
			if !strings.Contains(r.out, want) {
				t.Errorf("the refusal of a tampered %s lacks %q:\n%s", f, want, r.out)
			}
		}
		if _, err := os.Stat(filepath.Join(r.dir, "tampered-file-ran")); err == nil || strings.Contains(r.out, fakeRuntimeRan) {
			t.Errorf("a step with a tampered %s ran:\n%s", f, r.out)
		}
	}
}

// TestShellcheck: upload.sh (one pipeline, several, another step key) and
// the helpers the steps run pass shellcheck; so do the real runners'
// scripts as exported, each with the shared runtime it sources
// (shellcheck -x follows it), and each runtime alone.
func TestShellcheck(t *testing.T) {
	ws := []plan.Workload{dockerWorkload("a"), slurmWorkload("b")}
	for _, env := range []map[string]string{nil, {buildkite.JobsPerUploadVar: "1", buildkite.UploadStepVar: "bench:upload"}} {
		for _, a := range lowerPipelines(t, buildkite.New(fakeRunners()), ws, env) {
			if a.Path == buildkite.UploadFile || strings.HasPrefix(a.Path, "helpers/") {
				runnertest.Shellcheck(t, a.Path, a.Data)
			}
		}
	}
	arts := lowerPipelines(t, buildkite.New(goldenRunners()), []plan.Workload{dockerWorkload("d"), k8sWorkload("k", "nvidia")}, nil)
	export := t.TempDir()
	writeExport(t, export, arts)
	sc := testenv.LookPath(t, "shellcheck")
	runtimes := 0
	for _, a := range arts {
		switch {
		case strings.HasPrefix(a.Path, "helpers/runtime-"):
			runtimes++
			runnertest.Shellcheck(t, a.Path, a.Data)
		case strings.HasPrefix(a.Path, buildkite.ScriptsDir+"/"):
			if out, err := exec.Command(sc, "-x", "-s", "bash", "-f", "gcc", filepath.Join(export, a.Path)).CombinedOutput(); err != nil {
				t.Errorf("shellcheck -x %s: %v\n%s", a.Path, err, out)
			}
		}
	}
	if runtimes != 2 {
		t.Errorf("%d shared runtimes, want the docker and the native one", runtimes)
	}
}

// TestUploadStepKey: WLC_UPLOAD_STEP names the upload step in every
// step's downloads and in upload.sh's check; a value Buildkite would not
// take as a step key, or that upload-time interpolation would read, is
// an export error naming the variable.
func TestUploadStepKey(t *testing.T) {
	arts := lowerPipelines(t, buildkite.New(fakeRunners()), []plan.Workload{dockerWorkload("a")}, map[string]string{buildkite.UploadStepVar: " bench:upload "})
	if !bytes.Contains(arts[0].Data, []byte("\n      buildkite-agent artifact download scripts/a.sh .wlc --step bench:upload\n")) {
		t.Errorf("the step does not download from step bench:upload:\n%s", arts[0].Data)
	}
	if up := arts[len(arts)-1]; !bytes.Contains(up.Data, []byte(`if [ "${BUILDKITE_STEP_KEY:-}" != bench:upload ]; then`)) {
		t.Errorf("upload.sh does not check for key bench:upload:\n%s", up.Data)
	}
	for _, v := range []string{"$KEY", "a b", "k${X}", strings.Repeat("k", 101), "01234567-89ab-cdef-0123-456789abcdef"} {
		_, err := buildkite.New(fakeRunners()).Lower([]plan.Workload{dockerWorkload("a")}, optsEnv(map[string]string{buildkite.UploadStepVar: v}))
		if err == nil || !strings.Contains(err.Error(), buildkite.UploadStepVar+"=") || !strings.Contains(err.Error(), "want the key of the step that runs upload.sh") {
			t.Errorf("%s=%q: %v", buildkite.UploadStepVar, v, err)
		}
	}
}
