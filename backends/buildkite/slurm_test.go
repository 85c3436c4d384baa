package buildkite_test

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/backends/buildkite"
	"github.com/wlcdev/wlc/backends/runner/runnertest"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/testrig/bktest"
	"github.com/wlcdev/wlc/internal/testrig/slurmtest"
)

// sbatchRunner renders a small real sbatch script: its log goes to the
// results directory like the slurm backend's, it prints runtime `$` forms,
// sleeps and exits with a chosen status.
type sbatchRunner struct {
	sleep, exit int
}

func (sbatchRunner) Name() string    { return "slurm" }
func (sbatchRunner) Summary() string { return "test sbatch runner" }
func (r sbatchRunner) Lower(ws []plan.Workload, _ backends.Options) ([]backends.Artifact, error) {
	w := ws[0]
	s := fmt.Sprintf(`#!/bin/bash
#SBATCH --job-name=wlc-%[1]s
#SBATCH --nodes=1
#SBATCH --output=%[2]s/slurm-%%j.out
#SBATCH --error=%[2]s/slurm-%%j.err
A=(x y)
echo "job ${SLURM_JOB_ID} says ${#A[@]} ${X:-y}"
echo "to stderr" >&2
sleep %[3]d
exit %[4]d
`, w.Name, w.ResultsPath, r.sleep, r.exit)
	return []backends.Artifact{{Path: w.Name + ".sbatch", Data: []byte(s)}}, nil
}

// slurmStep is a Slurm step as the real agent would upload it, its
// scripts published by the upload step.
func slurmStep(t *testing.T, r sbatchRunner, name string) (*published, uploadedStep) {
	t.Helper()
	b := buildkite.New(map[string]backends.Backend{"slurm": r})
	arts := lowerPipelines(t, b, []plan.Workload{slurmWorkload(name)}, nil)
	steps := uploadedSteps(t, bktest.DryRun(t, pipelinesOf(arts)[0].Data, map[string]string{"X": "uploader"}))
	return publish(t, arts), steps[0]
}

func startStep(t *testing.T, c *slurmtest.Cluster, pub *published, s uploadedStep) (*exec.Cmd, *runnertest.SyncBuffer, string) {
	t.Helper()
	cmd, dir := pub.command(t, s, s.Command, c.Env())
	out := &runnertest.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, out, dir
}

// TestSlurmStepOnCluster runs a Slurm step's uploaded command on the local
// cluster: the job's log shows up in the step's output and the step exits
// with the job's status.
func TestSlurmStepOnCluster(t *testing.T) {
	c := slurmtest.Require(t)
	pub, s := slurmStep(t, sbatchRunner{sleep: 1, exit: 3}, "kimi")
	cmd, out, dir := startStep(t, c, pub, s)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("step: %v, want exit 3\n%s", err, out)
	}
	for _, want := range []string{"wlc: Slurm job ", " says 2 y\n", "to stderr\n", " exited 3\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("step output lacks %q:\n%s", want, out)
		}
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "results", "kimi", "slurm-*.out"))
	if len(logs) != 1 {
		t.Errorf("job logs in results/kimi: %v", logs)
	}
}

// TestSlurmStepCancel: cancelling the step (Buildkite sends SIGTERM to the
// process group) cancels the Slurm job, so no GPU job outlives its build.
func TestSlurmStepCancel(t *testing.T) {
	c := slurmtest.Require(t)
	pub, s := slurmStep(t, sbatchRunner{sleep: 120, exit: 0}, "kimi_cancel")
	cmd, out, _ := startStep(t, c, pub, s)
	jobRE := regexp.MustCompile(`wlc: Slurm job (\d+);`)
	var job string
	for deadline := time.Now().Add(30 * time.Second); job == "" && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if m := jobRE.FindStringSubmatch(out.String()); m != nil {
			job = m[1]
		}
	}
	if job == "" {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Fatalf("no job id in the step output:\n%s", out)
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		c.Cancel(t, job)
		t.Fatalf("the step did not end after SIGTERM:\n%s", out)
	}
	if state, _ := c.Wait(t, job, 30*time.Second); state != "CANCELLED" {
		t.Errorf("job %s ended %s, want CANCELLED\n%s", job, state, out)
	}
	if !strings.Contains(out.String(), "cancelling Slurm job "+job) {
		t.Errorf("step output:\n%s", out)
	}
}
