package buildkite_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/backends/buildkite"
	"github.com/wlcdev/wlc/backends/runner/runnertest"
	"github.com/wlcdev/wlc/internal/testrig/bktest"
)

// published is an export whose scripts and helpers the upload step (key
// buildkite.UploadStepKey) has uploaded to an Agent API stand-in, where the
// steps' jobs download them with the real buildkite-agent.
type published struct {
	api    *bktest.AgentAPI
	agent  string // the real agent's path
	upload bktest.Job
	jobs   atomic.Int64
}

var uploadJob = bktest.Job{ID: "0193-upload-job", StepKey: buildkite.UploadStepKey, Label: ":pipeline: wlc export"}

// publish stores the export's scripts as the upload step's artifacts, as
// upload.sh's `artifact upload` would (TestUploadAndRunSteps runs it).
func publish(t testing.TB, arts []backends.Artifact) *published {
	t.Helper()
	p := newBuild(t)
	for _, a := range arts {
		if buildkite.IsStepFile(a.Path) {
			p.api.PutArtifact(p.upload.ID, a.Path, a.Data)
		}
	}
	return p
}

// newBuild is a build whose upload step has uploaded nothing yet.
func newBuild(t testing.TB) *published {
	t.Helper()
	p := &published{api: bktest.NewAgentAPI(t), agent: bktest.Agent(t), upload: uploadJob}
	p.api.AddJob(p.upload)
	return p
}

// jobResult is how a step's job ended.
type jobResult struct {
	dir  string // the checkout
	out  string // stdout and stderr
	err  error
	code int
	env  []string // the job's environment
}

// command is command as the agent runs a step's job: `bash -e -c` in a
// fresh checkout (returned), its own process group, with base (nil: a
// minimal PATH, HOME differing from the uploader's), the agent's
// environment for a new job of the build (the Agent API, BUILDKITE_*), the
// real agent first on PATH, the step's env, then extra.
func (p *published) command(t testing.TB, s uploadedStep, command string, base []string, extra ...string) (*exec.Cmd, string) {
	t.Helper()
	job := bktest.Job{ID: fmt.Sprintf("0193-step-job-%d", p.jobs.Add(1)), Label: s.Label}
	p.api.AddJob(job)
	dir := t.TempDir()
	cmd := exec.Command("bash", "-e", "-c", command)
	cmd.Dir = dir
	if base == nil {
		base = []string{"PATH=" + os.Getenv("PATH"), "HOME=/home/job", "LANG=C"}
	}
	for _, kv := range base {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			kv = "PATH=" + filepath.Dir(p.agent) + string(os.PathListSeparator) + v
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(append(cmd.Env, "BUILDKITE=true"), p.api.Env(job)...)
	for k, v := range s.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Env = append(cmd.Env, extra...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd, dir
}

// run runs the job (p.command with the minimal base) to its end, at most
// two minutes.
func (p *published) run(t testing.TB, s uploadedStep, command string, extra ...string) jobResult {
	t.Helper()
	return p.runWith(t, s, command, nil, extra...)
}

// runWith runs the job (p.command with base) to its end, at most two
// minutes.
func (p *published) runWith(t testing.TB, s uploadedStep, command string, base []string, extra ...string) jobResult {
	t.Helper()
	cmd, dir := p.command(t, s, command, base, extra...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(2*time.Minute, func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	err := cmd.Wait()
	if !timer.Stop() {
		t.Fatalf("the step did not end within two minutes:\n%s", out.String())
	}
	r := jobResult{dir: dir, out: out.String(), err: err, env: cmd.Env}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running the step: %v\n%s", err, out.String())
	}
	return r
}

// runLine is the start of a step command's last line, which runs the job.
const runLine = "bash .wlc/helpers/token.sh "

// scriptOf runs the step's command up to its last line, the one that would
// run the job, and returns the runner's script the command downloaded and
// checked, .wlc/scripts/<name>, with the shared runtime it sources (also
// downloaded and checked) inlined: the script that would run, whole.
func (p *published) scriptOf(t testing.TB, s uploadedStep, name string) []byte {
	t.Helper()
	body, last, ok := strings.Cut(strings.TrimSuffix(s.Command, "\n"), "\n"+runLine)
	if !ok || strings.Contains(last, "\n") {
		t.Fatalf("the command does not end with a line starting %q:\n%s", runLine, s.Command)
	}
	r := p.run(t, s, body+"\n")
	if r.err != nil {
		t.Fatalf("fetching the step's files: %v\n%s", r.err, r.out)
	}
	return runnertest.InlineFile(t, filepath.Join(r.dir, ".wlc", buildkite.ScriptsDir, name))
}
