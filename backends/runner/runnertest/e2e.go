package runnertest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/plan/plandiff"
	"github.com/wlcdev/wlc/internal/testrig/slurmtest"
	"github.com/wlcdev/wlc/internal/testrig/stub"
	"github.com/wlcdev/wlc/schema"
)

var (
	stubOnce sync.Once
	stubDir  string
	stubErr  error
)

// Main runs a test package's tests and removes the stubs built for them.
// Use it from TestMain: func TestMain(m *testing.M) { os.Exit(runnertest.Main(m)) }.
func Main(m *testing.M) int {
	code := m.Run()
	if stubDir != "" {
		os.RemoveAll(stubDir)
	}
	return code
}

// Stubs builds the stubs once per test process and returns their directory.
func Stubs(t testing.TB) string {
	t.Helper()
	stubOnce.Do(func() {
		stubDir, stubErr = os.MkdirTemp("", "wlc-stubs-")
		if stubErr == nil {
			stubErr = stub.BuildDir(stubDir)
		}
	})
	if stubErr != nil {
		t.Fatal(stubErr)
	}
	return stubDir
}

// Job is one script run's sandbox: a working directory (results/ lands
// there), the stub record directory and the fake docker's state.
type Job struct {
	W           plan.Workload
	Dir         string
	Script      string
	StubLog     string
	DockerState string
	Env         []string
}

// NewJob lowers w through b into a fresh directory and prepares the
// environment: stubs first on PATH, a python3 whose image has none of the
// client tools and whose pip installs the stub ones (internal/testrig/stub/python),
// datasets prepared in the sandbox from the stub SPEED-Bench preparation,
// a unique BUILDKITE_JOB_ID, fast polls, HF_TOKEN set. extra is appended to
// the environment (a later entry wins).
func NewJob(t testing.TB, b backends.Backend, w plan.Workload, extra ...string) *Job {
	t.Helper()
	bin := Stubs(t)
	arts, err := b.Lower([]plan.Workload{w}, backends.Options{})
	if err != nil || len(arts) != 1 {
		t.Fatalf("lowering %s: %v (%d artifacts)", w.Name, err, len(arts))
	}
	dir := t.TempDir()
	j := &Job{W: w, Dir: dir, Script: filepath.Join(dir, arts[0].Path),
		StubLog: filepath.Join(dir, "stub-log"), DockerState: filepath.Join(dir, "docker-state")}
	if err := os.WriteFile(j.Script, arts[0].Data, 0o755); err != nil {
		t.Fatal(err)
	}
	j.Env = append(append([]string{
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}, ClientEnv(bin, dir)...),
		"WLC_STUB_LOG="+j.StubLog,
		"WLC_FAKE_DOCKER_STATE="+j.DockerState,
		"WLC_BENCH_DIR="+filepath.Join(dir, "container-bench"),
		"BUILDKITE_JOB_ID="+fmt.Sprintf("%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), time.Now().UnixNano()),
		"WLC_POLL_S=0.1",
		"WLC_STOP_TIMEOUT_S=5",
		"HF_TOKEN=hf-secret-value",
		"WLC_TEST_SECRET=second-secret",
		"WLC_PORT=", "SLURM_JOB_ID=", "WLC_RUN_ID=", "WLC_RESULTS_DIR=",
	)
	j.Env = append(j.Env, extra...)
	return j
}

// ClientEnv is the environment of the place a job's clients run, in the
// tests (bin is the stubs' directory, dir a sandbox): python3 has none of
// the client tools and its pip installs the stub ones into dir/pip-site
// (internal/testrig/stub/python), pip is retried at once, and SPEED-Bench is
// prepared in dir/data by the stub NeMo-Skills preparation.
func ClientEnv(bin, dir string) []string {
	site := filepath.Join(dir, "pip-site")
	return []string{
		"PYTHONPATH=" + stub.Python(bin, site),
		"WLC_STUB_PIP_SITE=" + site,
		"WLC_TOOLS_RETRY_S=0",
		"WLC_DATA_DIR=" + filepath.Join(dir, "data"),
		"WLC_SPEED_BENCH_PREPARE_URL=file://" + filepath.Join(bin, "python", "speed_bench_prepare.py"),
	}
}

// SlurmExport is sbatch's --export option for a job under the stubs (bin
// first on PATH), recording into records, polling the server every poll
// seconds and stopping it within 5 s, with a stand-in HF_TOKEN and env
// (NAME=VALUE entries, e.g. ClientEnv's) on top.
func SlurmExport(bin, records, poll string, env ...string) string {
	export := slurmtest.ExportPath(bin) + ",WLC_STUB_LOG=" + records + ",WLC_POLL_S=" + poll + ",WLC_STOP_TIMEOUT_S=5,HF_TOKEN=hf-secret-value"
	for _, e := range env {
		export += "," + e
	}
	return export
}

// Run runs the job's script (at most timeout).
func (j *Job) Run(t testing.TB, timeout time.Duration) Result {
	t.Helper()
	return Run(t, j.Script, j.Dir, j.Env, timeout)
}

// Results is the workload's results directory.
func (j *Job) Results() string { return filepath.Join(j.Dir, filepath.FromSlash(j.W.ResultsPath)) }

// Records are the stub processes' records.
func (j *Job) Records(t testing.TB) []stub.Record {
	t.Helper()
	rs, err := stub.Records(j.StubLog)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return rs
}

// Find returns the records of program in mode.
func Find(rs []stub.Record, program, mode string) []stub.Record {
	var out []stub.Record
	for _, r := range rs {
		if r.Program == program && r.Mode == mode {
			out = append(out, r)
		}
	}
	return out
}

// NoProcessLeft fails when any stub process (server, bench client, fake
// container supervisor) still runs shortly after the script exited.
func (j *Job) NoProcessLeft(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for _, r := range j.Records(t) {
		for Alive(r.PID) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if Alive(r.PID) {
			t.Errorf("%s %s (pid %d) still runs after the script exited", r.Program, r.Mode, r.PID)
		}
	}
}

// CheckBenchResults asserts every bench run's result files exist, each
// repetition completed every prompt, and each median file holds the median
// of its repetitions.
func (j *Job) CheckBenchResults(t testing.TB) {
	t.Helper()
	read := func(name string) map[string]any {
		data, err := os.ReadFile(filepath.Join(j.Results(), name))
		if err != nil {
			t.Fatalf("bench result missing: %v", err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return m
	}
	for _, r := range j.W.Bench {
		var tput []float64
		for _, f := range r.RunFiles {
			m := read(f)
			failed, has := m["failed"]
			if j.W.Engine == schema.EngineSGLang {
				// bench_serving's row has no failed count, only completed;
				// its raw JSONL is kept beside the row.
				failed, has = float64(0), true
				if _, err := os.Stat(filepath.Join(j.Results(), strings.TrimSuffix(f, ".json")+".jsonl")); err != nil {
					t.Errorf("raw bench_serving output missing: %v", err)
				}
			}
			if m["completed"] != float64(r.NumPrompts) || !has || failed != float64(0) {
				t.Errorf("%s: completed %v failed %v, want %d and 0", f, m["completed"], m["failed"], r.NumPrompts)
			}
			if m["max_concurrency"] != float64(r.MaxConcurrency) {
				t.Errorf("%s: max_concurrency %v, want %d", f, m["max_concurrency"], r.MaxConcurrency)
			}
			tput = append(tput, m["request_throughput"].(float64))
		}
		if len(r.RunFiles) == 1 {
			continue
		}
		med := read(r.Result)
		sort.Float64s(tput)
		if med["request_throughput"] != tput[len(tput)/2] {
			t.Errorf("%s: request_throughput %v, want the median of %v", r.Result, med["request_throughput"], tput)
		}
		agg, _ := med["wlc_aggregate"].(map[string]any)
		if fmt.Sprint(agg["runs"]) != fmt.Sprint(r.RunFiles) {
			t.Errorf("%s: aggregated runs %v, want %v", r.Result, agg["runs"], r.RunFiles)
		}
		if _, ok := med["ttfts"]; ok {
			t.Errorf("%s keeps a per-request list", r.Result)
		}
	}
}

// CheckEvalResults asserts every lm_eval task and every BFCL category left
// an lm_eval results file in the results directory (lm_eval/<task>/, the
// BFCL ones as task bfcl_<category>) with the task's scores.
func (j *Job) CheckEvalResults(t testing.TB) {
	t.Helper()
	var tasks []string
	for _, l := range j.W.LMEval {
		tasks = append(tasks, l.Task)
	}
	for _, b := range j.W.BFCL {
		tasks = append(tasks, "bfcl_"+b.Category)
	}
	for _, task := range tasks {
		files, _ := filepath.Glob(filepath.Join(j.Results(), "lm_eval", task, "*", "results_*.json"))
		more, _ := filepath.Glob(filepath.Join(j.Results(), "lm_eval", task, "results_*.json"))
		files = append(files, more...)
		if len(files) != 1 {
			t.Errorf("lm_eval/%s: %d results files, want 1 (%v)", task, len(files), files)
			continue
		}
		data, err := os.ReadFile(files[0])
		if err != nil {
			t.Error(err)
			continue
		}
		var r struct {
			Results map[string]map[string]any `json:"results"`
		}
		if err := json.Unmarshal(data, &r); err != nil || len(r.Results[task]) == 0 {
			t.Errorf("%s: no results for %s (%v): %s", files[0], task, err, data)
		}
	}
}

// BenchInvocations counts benchmark client runs (`vllm bench serve`, or
// sglang.bench_serving on engine sglang) and checks each was pointed at
// the server and asked to save its result.
func (j *Job) BenchInvocations(t testing.TB) int {
	t.Helper()
	program, mode, save := "vllm", "bench", "--save-result"
	if j.W.Engine == schema.EngineSGLang {
		program, mode, save = "sglang", "bench_serving", "--output-file"
	}
	bs := Find(j.Records(t), program, mode)
	for _, b := range bs {
		_, saves := stub.Flag(b.Argv, save)
		if _, ok := stub.Flag(b.Argv, "--base-url"); !ok || !(saves || stub.Has(b.Argv, save)) {
			t.Errorf("bench argv lacks --base-url or %s: %q", save, b.Argv)
		}
	}
	return len(bs)
}

// WantRuns is how many `vllm bench serve` invocations the plan asks for.
func WantRuns(w plan.Workload) int {
	n := 0
	for _, r := range w.Bench {
		n += len(r.RunFiles)
	}
	return n
}

// SyncBuffer is an output buffer safe to read while a script writes it.
type SyncBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (l *SyncBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	return len(p), nil
}

func (l *SyncBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}

// RunAndSignal starts the script, sends SIGTERM to the bash process (as a
// CI agent cancelling the job would) once ready(output) holds, and waits.
func (j *Job) RunAndSignal(t testing.TB, timeout time.Duration, ready func(string) bool) Result {
	t.Helper()
	cmd := exec.Command("bash", j.Script)
	cmd.Dir = j.Dir
	cmd.Env = append(os.Environ(), j.Env...)
	out := &SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.After(timeout)
	signalled := false
	for {
		select {
		case err := <-done:
			res := Result{Output: out.String(), Took: time.Since(start)}
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				res.Code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if !signalled {
				t.Fatalf("the script ended before the signal:\n%s", res.Output)
			}
			return res
		case <-deadline:
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Fatalf("no exit within %v:\n%s", timeout, out.String())
		case <-time.After(50 * time.Millisecond):
			if !signalled && ready(out.String()) {
				_ = cmd.Process.Signal(syscall.SIGTERM)
				signalled = true
			}
		}
	}
}

// Provenance is the part of a job's provenance.json the tests read.
type Provenance struct {
	JobHash string `json:"job_hash"`
	Plan    struct {
		Model  string `json:"model"`
		Image  struct{ Ref, Pull string }
		Server struct {
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
			Secrets []string          `json:"secrets"`
		} `json:"server"`
	} `json:"plan"`
	Image struct {
		Digest *string `json:"digest"`
	} `json:"image"`
	EngineVersion *string `json:"engine_version"`
	GPUs          struct {
		Vendor, Model, Driver string
		Count                 int
	} `json:"gpus"`
	Steps []struct {
		Name    string   `json:"name"`
		Argv    []string `json:"argv"`
		Status  int      `json:"status"`
		Seconds float64  `json:"seconds"`
	} `json:"steps"`
	Phases []struct {
		Name    string  `json:"name"`
		Seconds float64 `json:"seconds"`
	} `json:"phases"`
	WallSeconds float64 `json:"wall_seconds"`
	ExitStatus  int     `json:"exit_status"`
	ExitClass   string  `json:"exit_class"`
}

// ScriptJobHash is the job hash an exported script runs with: the value
// its header exports as WLC_JOB_HASH (wlc show prints the same).
func ScriptJobHash(t testing.TB, script string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^export WLC_JOB_HASH=(\S+)`).FindStringSubmatch(script)
	if m == nil {
		t.Fatal("the script exports no WLC_JOB_HASH")
	}
	return m[1]
}

// JobHash is the job hash of the job's workload, as wlc show prints it.
func (j *Job) JobHash(t testing.TB) string {
	t.Helper()
	h, err := plan.JobHash(j.W)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// CheckProvenance reads the job's provenance.json and asserts what every
// job's says: the job hash it ran with (hash), the stub vLLM's version, the
// stub GPUs (8 NVIDIA H100s), the plan's model and server arguments, each
// step the plan has with its status, a phase for the server's load, each
// step and the teardown, none longer than the job, no secret's value
// anywhere (NewJob's HF_TOKEN and WLC_TEST_SECRET) and the job's status.
// It returns the file for the backend's own checks.
func (j *Job) CheckProvenance(t testing.TB, hash string, status int) Provenance {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(j.Results(), "provenance.json"))
	if err != nil {
		t.Fatalf("provenance.json: %v", err)
	}
	for _, secret := range []string{"hf-secret-value", "second-secret"} {
		if strings.Contains(string(data), secret) {
			t.Errorf("provenance.json holds a secret's value %q:\n%s", secret, data)
		}
	}
	t.Logf("provenance.json:\n%s", data)
	var p Provenance
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatalf("provenance.json is not JSON: %v\n%s", err, data)
	}
	if p.JobHash != hash {
		t.Errorf("job_hash %q, want %q", p.JobHash, hash)
	}
	// wlc diff --results reads the same file: the job's record must be
	// what it measures GPU-hours from.
	runs, errs := plandiff.ReadRuns(os.DirFS(j.Results()), j.Results())
	if len(errs) > 0 {
		t.Errorf("wlc diff cannot read provenance.json: %v", errs)
	} else if r, ok := runs[hash]; !ok || r.WallS != p.WallSeconds || r.FinishedAt.IsZero() {
		t.Errorf("wlc diff reads %+v for %s, want wall_seconds %v and a finished_at", r, hash, p.WallSeconds)
	}
	if p.EngineVersion == nil || *p.EngineVersion != "0.13.0" {
		t.Errorf("engine_version %v, want the stub vllm's 0.13.0", p.EngineVersion)
	}
	if p.GPUs.Vendor != "nvidia" || p.GPUs.Model != "NVIDIA H100 80GB HBM3" || p.GPUs.Count != 8 || p.GPUs.Driver != "550.54.15" {
		t.Errorf("gpus %+v, want the stub nvidia-smi's 8 NVIDIA H100 80GB HBM3, driver 550.54.15", p.GPUs)
	}
	if p.Plan.Model != j.W.Model || fmt.Sprint(p.Plan.Server.Args) != fmt.Sprint(j.W.Serve.Args) {
		t.Errorf("plan: model %q args %q, want %q %q", p.Plan.Model, p.Plan.Server.Args, j.W.Model, j.W.Serve.Args)
	}
	if fmt.Sprint(p.Plan.Server.Secrets) != fmt.Sprint(j.W.Secrets) {
		t.Errorf("plan: secrets %q, want the names %q", p.Plan.Server.Secrets, j.W.Secrets)
	}
	if p.ExitStatus != status {
		t.Errorf("exit_status %d, want %d", p.ExitStatus, status)
	}
	phases := map[string]float64{}
	for _, ph := range p.Phases {
		phases[ph.Name] = ph.Seconds
		if ph.Seconds < 0 || ph.Seconds > p.WallSeconds {
			t.Errorf("phase %s took %vs of a %vs job", ph.Name, ph.Seconds, p.WallSeconds)
		}
	}
	var want []string
	for _, b := range j.W.Bench {
		want = append(want, "bench "+b.Name)
	}
	for _, l := range j.W.LMEval {
		want = append(want, "lm_eval "+l.Task)
	}
	for _, b := range j.W.BFCL {
		want = append(want, "bfcl "+b.Category)
	}
	steps := map[string]int{}
	for _, s := range p.Steps {
		steps[s.Name] = s.Status
		if len(s.Argv) == 0 {
			t.Errorf("step %s: no argv", s.Name)
		}
	}
	for _, name := range want {
		if _, ok := steps[name]; !ok {
			t.Errorf("no step %q in provenance.json (steps %v)", name, steps)
		}
		if _, ok := phases[name]; !ok {
			t.Errorf("no phase %q in provenance.json (phases %v)", name, phases)
		}
	}
	for _, name := range []string{"server load", "teardown"} {
		if _, ok := phases[name]; !ok {
			t.Errorf("no phase %q in provenance.json (phases %v)", name, phases)
		}
	}
	if _, ok := phases["tools"]; len(j.W.Tools) > 0 && !ok {
		t.Errorf("no tools phase in provenance.json (phases %v)", phases)
	}
	if p.WallSeconds <= 0 || p.WallSeconds > 2*time.Hour.Seconds() {
		t.Errorf("wall_seconds %v", p.WallSeconds)
	}
	return p
}
