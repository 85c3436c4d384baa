// Package slurmtest lets tests submit sbatch scripts to the real Slurm
// cluster that testdata/slurm/start.sh runs on this machine (2 nodes n1, n2,
// 4 fake GPUs each, fakepyxis for --container-* options). In CI,
// .ci/setup.d/30-slurm.sh starts it; locally:
//
//	eval "$(bash testdata/slurm/start.sh)"   # and later: bash testdata/slurm/stop.sh
//
// Without a cluster, Require skips the test, except under CI=true where it
// fails (see internal/testrig/testenv).
//
// There is no accounting database, so job state comes from `scontrol show
// job`; the cluster keeps finished jobs for an hour (MinJobAge).
package slurmtest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// Cluster is a running local Slurm cluster.
type Cluster struct {
	// Conf is the slurm.conf path; every command here gets it as SLURM_CONF.
	Conf string
	// Dir holds the cluster's state; its logs are in Dir/log.
	Dir string
	// Nodes are the node names in order, e.g. ["n1", "n2"].
	Nodes []string
	// GPUsPerNode is the gres/gpu count of each node.
	GPUsPerNode int
}

// Terminal job states, after which Wait returns. COMPLETING is not one:
// a job's processes may still be running then.
var finalStates = map[string]bool{
	"COMPLETED": true, "FAILED": true, "CANCELLED": true, "TIMEOUT": true,
	"NODE_FAIL": true, "PREEMPTED": true, "BOOT_FAIL": true, "DEADLINE": true,
	"OUT_OF_MEMORY": true,
}

// Nodes may be busy with jobs of test packages running in parallel, so any
// state that can still run jobs counts as up. "planned" (or a state with a
// "-" suffix) is a node the backfill scheduler has set aside for a pending
// job: it shows up whenever two packages queue jobs at once.
var usableNodeStates = map[string]bool{
	"idle": true, "mixed": true, "allocated": true, "completing": true, "planned": true,
}

const startHint = `start one with: eval "$(bash testdata/slurm/start.sh)" (as root, from the repo root), or run bash .ci/run`

// The first Require's verdict holds for the whole test binary: a dead
// controller makes sinfo retry for ~9 s, which should be paid once.
var (
	cachedMu      sync.Mutex
	cached        *Cluster
	cachedMissing string
)

// Require returns the running cluster named by WLC_SLURM_CONF (or
// SLURM_CONF), or skips the test (fails it under CI=true) when there is none
// or one of its nodes cannot run jobs.
func Require(t testing.TB) *Cluster {
	t.Helper()
	cachedMu.Lock()
	defer cachedMu.Unlock()
	if cached != nil {
		return cached
	}
	if cachedMissing != "" {
		testenv.Missing(t, cachedMissing)
	}
	// Missing ends the test with runtime.Goexit, so the reason is recorded
	// on the way out.
	var reason string
	missing := func(r string) { reason = r; testenv.Missing(t, r) }
	defer func() {
		if cached == nil {
			cachedMissing = reason
		}
	}()
	conf := os.Getenv("WLC_SLURM_CONF")
	if conf == "" {
		conf = os.Getenv("SLURM_CONF")
	}
	if conf == "" {
		missing("no Slurm cluster: WLC_SLURM_CONF and SLURM_CONF are unset; " + startHint)
	}
	if _, err := os.Stat(conf); err != nil {
		missing(fmt.Sprintf("no Slurm cluster: %v; %s", err, startHint))
	}
	for _, tool := range []string{"sinfo", "sbatch", "scontrol", "scancel", "squeue"} {
		testenv.LookPath(t, tool)
	}
	dir := os.Getenv("WLC_SLURM_DIR")
	if dir == "" {
		dir = filepath.Dir(conf)
	}
	c := &Cluster{Conf: conf, Dir: dir}
	out, err := c.run(10*time.Second, "", "sinfo", "-h", "-N", "-o", "%N|%T|%G")
	if err != nil {
		missing(fmt.Sprintf("Slurm cluster at %s does not answer (sinfo: %v); %s", conf, err, startHint))
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, "|")
		if len(f) != 3 || seen[f[0]] {
			continue
		}
		seen[f[0]] = true
		// sinfo marks a busy node the backfill scheduler has planned for a
		// pending job with a "-" suffix ("mixed-"); other suffixes (* not
		// responding, ~ powered off, ...) stay unusable.
		if !usableNodeStates[strings.TrimSuffix(f[1], "-")] {
			missing(fmt.Sprintf("Slurm node %s is %s (see %s/log); restart the cluster: bash testdata/slurm/stop.sh, then %s",
				f[0], f[1], dir, startHint))
		}
		c.Nodes = append(c.Nodes, f[0])
		if m := regexp.MustCompile(`gpu:(?:[^:,]+:)?(\d+)`).FindStringSubmatch(f[2]); m != nil {
			c.GPUsPerNode, _ = strconv.Atoi(m[1])
		}
	}
	if len(c.Nodes) < 2 {
		missing(fmt.Sprintf("Slurm cluster at %s has nodes %v, want 2 (WLC_SLURM_NODES=2); %s", conf, c.Nodes, startHint))
	}
	cached = c
	return c
}

// Env is the environment for Slurm commands: this process's, without
// SLURM_*/SBATCH_*/SRUN_*/SALLOC_* variables (which would change what sbatch
// does, e.g. when go test itself runs inside a job), plus SLURM_CONF.
func (c *Cluster) Env() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "SLURM_"), strings.HasPrefix(name, "SBATCH_"),
			strings.HasPrefix(name, "SRUN_"), strings.HasPrefix(name, "SALLOC_"):
			continue
		}
		env = append(env, kv)
	}
	return append(env, "SLURM_CONF="+c.Conf)
}

// Command returns a Slurm client command (sbatch, squeue, ...) aimed at c.
func (c *Cluster) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = c.Env()
	return cmd
}

// run runs a Slurm command and returns its stdout; the error includes stderr.
func (c *Cluster) run(timeout time.Duration, dir, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := c.Command(ctx, name, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%s timed out after %v: %w", name, timeout, ctx.Err())
	}
	if err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err,
			strings.TrimSpace(stderr.String()+"\n"+stdout.String()))
	}
	return stdout.String(), nil
}

// ExportPath returns the sbatch option that puts dirs first on the job's PATH
// (and on every srun step's, which inherit it), keeping the rest of this
// process's environment: pass it to Sbatch to run stubs such as a fake vllm.
func ExportPath(dirs ...string) string {
	return "--export=ALL,PATH=" + strings.Join(append(dirs, os.Getenv("PATH")), ":")
}

// Sbatch submits script with extraArgs as sbatch options (before the script,
// so they override its #SBATCH lines) and returns the job ID. The job's
// working directory, and so the default slurm-<id>.out, is a fresh
// t.TempDir(); Output reads whatever file the job writes its stdout to. A job
// still queued or running when the test ends is cancelled.
func (c *Cluster) Sbatch(t testing.TB, script string, extraArgs ...string) string {
	t.Helper()
	abs, err := filepath.Abs(script)
	if err != nil {
		t.Fatalf("sbatch: %v", err)
	}
	workdir := t.TempDir()
	args := append([]string{"--parsable"}, extraArgs...)
	out, err := c.run(30*time.Second, workdir, "sbatch", append(args, abs)...)
	if err != nil {
		t.Fatalf("sbatch rejected %s: %v", script, err)
	}
	id, _, _ := strings.Cut(strings.TrimSpace(out), ";")
	if _, err := strconv.Atoi(id); err != nil {
		t.Fatalf("sbatch --parsable printed %q, want a job ID", out)
	}
	// Registered after TempDir, so it runs first: the job is gone before its
	// working directory is removed.
	t.Cleanup(func() {
		if st := c.state(id); st != "" && !finalStates[st] {
			t.Logf("cancelling job %s, still %s at the end of the test", id, st)
			c.cancelAndWait(id, 20*time.Second)
		}
	})
	return id
}

// TestOnly asks slurmctld whether script (with extraArgs as sbatch options)
// could ever run on this cluster, without submitting it (`sbatch
// --test-only`). The error holds sbatch's reason, e.g. "Requested node
// configuration is not available".
func (c *Cluster) TestOnly(t testing.TB, script string, extraArgs ...string) error {
	t.Helper()
	abs, err := filepath.Abs(script)
	if err != nil {
		t.Fatalf("sbatch --test-only: %v", err)
	}
	args := append([]string{"--test-only"}, extraArgs...)
	_, err = c.run(30*time.Second, t.TempDir(), "sbatch", append(args, abs)...)
	return err
}

// Job returns the fields of `scontrol show job -o ID` (JobState, ExitCode,
// NodeList, StdOut, ...), or nil when slurmctld no longer knows the job.
func (c *Cluster) Job(t testing.TB, jobID string) map[string]string {
	t.Helper()
	f, err := c.job(jobID)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return f
}

var fieldKey = regexp.MustCompile(`(?:^|\s)([A-Za-z][A-Za-z0-9:/_]*)=`)

func (c *Cluster) job(jobID string) (map[string]string, error) {
	out, err := c.run(10*time.Second, "", "scontrol", "show", "job", "-o", jobID)
	if err != nil {
		if strings.Contains(err.Error(), "Invalid job id") {
			return nil, nil
		}
		return nil, err
	}
	return parseFields(strings.TrimSpace(out)), nil
}

// parseFields splits one line of `scontrol -o` output; values may contain
// spaces (Command, Reason), so each runs up to the next " Key=".
func parseFields(line string) map[string]string {
	f := map[string]string{}
	locs := fieldKey.FindAllStringSubmatchIndex(line, -1)
	for i, l := range locs {
		end := len(line)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		f[line[l[2]:l[3]]] = strings.TrimSpace(line[l[1]:end])
	}
	return f
}

func (c *Cluster) state(jobID string) string {
	f, err := c.job(jobID)
	if err != nil || f == nil {
		return ""
	}
	return f["JobState"]
}

// Wait polls the job until it reaches a final state (COMPLETED, FAILED,
// CANCELLED, TIMEOUT, ...) and returns that state and Slurm's ExitCode
// ("exit:signal", e.g. "0:0", "3:0"). A job not done within timeout is
// cancelled and fails the test, showing the job, its output and the logs.
func (c *Cluster) Wait(t testing.TB, jobID string, timeout time.Duration) (state, exitCode string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		f, err := c.job(jobID)
		if err != nil {
			t.Fatalf("waiting for job %s: %v", jobID, err)
		}
		if f == nil {
			t.Fatalf("job %s is unknown to slurmctld (was the cluster restarted?); logs in %s/log", jobID, c.Dir)
		}
		if finalStates[f["JobState"]] {
			return f["JobState"], f["ExitCode"]
		}
		if time.Now().After(deadline) {
			c.cancelAndWait(jobID, 10*time.Second)
			t.Fatalf("job %s still %s (reason %s) after %v; cancelled it.\n%s",
				jobID, f["JobState"], f["Reason"], timeout, c.diagnose(jobID, f))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// diagnose gathers what explains a stuck job.
func (c *Cluster) diagnose(jobID string, f map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "--- scontrol show job %s\n", jobID)
	for k, v := range f {
		fmt.Fprintf(&b, "%s=%s ", k, v)
	}
	if p := f["StdOut"]; p != "" {
		data, _ := os.ReadFile(p)
		fmt.Fprintf(&b, "\n--- %s\n%s", p, data)
	}
	if out, err := c.run(10*time.Second, "", "sinfo", "-N", "-o", "%N %T %E"); err == nil {
		fmt.Fprintf(&b, "\n--- sinfo\n%s", out)
	}
	logs, _ := filepath.Glob(filepath.Join(c.Dir, "log", "*.log"))
	for _, l := range logs {
		data, _ := os.ReadFile(l)
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		if len(lines) > 10 {
			lines = lines[len(lines)-10:]
		}
		fmt.Fprintf(&b, "\n--- %s (tail)\n%s", l, strings.Join(lines, "\n"))
	}
	return b.String()
}

// Output returns what the job wrote to its stdout file (StdOut= in scontrol).
func (c *Cluster) Output(t testing.TB, jobID string) string {
	t.Helper()
	f := c.Job(t, jobID)
	if f == nil {
		t.Fatalf("job %s is unknown to slurmctld", jobID)
	}
	data, err := os.ReadFile(f["StdOut"])
	if err != nil {
		t.Fatalf("reading output of job %s: %v", jobID, err)
	}
	return string(data)
}

// Cancel cancels the job and waits until it has left the queue (its
// processes are then gone).
func (c *Cluster) Cancel(t testing.TB, jobID string) {
	t.Helper()
	if err := c.cancelAndWait(jobID, 20*time.Second); err != nil {
		t.Fatalf("%v", err)
	}
}

func (c *Cluster) cancelAndWait(jobID string, timeout time.Duration) error {
	if _, err := c.run(10*time.Second, "", "scancel", jobID); err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	for {
		st := c.state(jobID)
		if st == "" || finalStates[st] {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("job %s still %s %v after scancel; see %s/log", jobID, st, timeout, c.Dir)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// KillGrace bounds how long a job's processes may outlive the job's end:
// slurmstepd sends SIGTERM, waits KillWait (2 s in slurm.conf.in) and then
// SIGKILLs, while the controller already reports the job ended. The margin
// covers a loaded 2-core CI machine.
const KillGrace = 10 * time.Second

// AfterKillGrace calls left until it returns nothing or KillGrace has
// passed, and returns its last answer: what still runs of a job that ended.
func AfterKillGrace(left func() []string) []string {
	deadline := time.Now().Add(KillGrace)
	for {
		l := left()
		if len(l) == 0 || time.Now().After(deadline) {
			return l
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Survivors is LeftoverProcesses once the job's processes have had
// KillGrace to die.
func Survivors(t testing.TB, pattern string) []string {
	t.Helper()
	return AfterKillGrace(func() []string { return LeftoverProcesses(t, pattern) })
}

// LeftoverProcesses lists live processes ("PID: command line") whose command
// line matches the regular expression pattern, leaving out this test process
// and its ancestors (whose command lines may hold the pattern too). Give job
// commands a unique marker, e.g. `sleep 612.25`, and assert the list is empty
// after the job ended. Zombies are left out: with no init reaping orphans in
// some containers they linger, yet run nothing.
func LeftoverProcesses(t testing.TB, pattern string) []string {
	t.Helper()
	re, err := regexp.Compile(pattern)
	if err != nil {
		t.Fatalf("LeftoverProcesses: bad pattern: %v", err)
	}
	skip := map[int]bool{}
	for pid := os.Getpid(); pid > 1 && !skip[pid]; pid = parentPID(pid) {
		skip[pid] = true
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatalf("LeftoverProcesses needs /proc: %v", err)
	}
	var found []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || skip[pid] || processState(pid) == "Z" {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(raw) == 0 {
			continue
		}
		cmdline := strings.TrimSpace(strings.ReplaceAll(string(raw), "\x00", " "))
		if re.MatchString(cmdline) {
			found = append(found, fmt.Sprintf("%d: %s", pid, cmdline))
		}
	}
	return found
}

// procStatus returns a field of /proc/PID/status, or "" when unreadable.
func procStatus(pid int, field string) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func parentPID(pid int) int {
	ppid, err := strconv.Atoi(procStatus(pid, "PPid"))
	if err != nil {
		return 0
	}
	return ppid
}

// processState is the one-letter state ("R", "S", "Z", ...), "" if gone.
func processState(pid int) string {
	st, _, _ := strings.Cut(procStatus(pid, "State"), " ")
	return st
}

// ProcessAlive reports whether pid is a live (non-zombie) process.
func ProcessAlive(pid int) bool {
	st := processState(pid)
	return st != "" && st != "Z"
}
