// Package e2e_test proves the whole chain on one workloads package
// (testdata/e2e): CUE workloads → `wlc export --backend buildkite` (the
// registry's backends, and the built wlc binary for the same bytes) → the
// real `buildkite-agent pipeline upload --dry-run` (what would be uploaded,
// after the agent's `$` interpolation) → each step's command run with
// `bash -e -c` in a fresh checkout, as an agent runs a job, the real agent
// downloading the step's script from an Agent API stand-in holding the
// export's scripts as the upload step's artifacts → a real job
// against the stubs of internal/testrig/stub (the fake docker on the docker host,
// vllm as a child process in the "pod", sbatch on the local Slurm cluster)
// → results on disk.
//
// Needs buildkite-agent v3.78.0, curl, python3 and setsid, and for the
// Slurm steps the local cluster (eval "$(bash testdata/slurm/start.sh)");
// without them the tests skip, except under CI=true where they fail.
// WLC_E2E_VERBOSE=1 logs every step's output.
//
// The Slurm steps take ~45 s although their jobs run ~15 s: `sbatch --wait`
// polls the job after 2, 10 and 42 s (Slurm 22.05 multiplies its sleep by
// 4 up to 32 s), and the 1-node job ends after the 10 s poll.
package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"cuelang.org/go/cue/cuecontext"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/backends/buildkite"
	"github.com/wlcdev/wlc/backends/registry"
	"github.com/wlcdev/wlc/backends/runner/runnertest"
	"github.com/wlcdev/wlc/internal/load"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/results/ingest/ingesttest"
	"github.com/wlcdev/wlc/internal/testrig/bktest"
	"github.com/wlcdev/wlc/internal/testrig/slurmtest"
	"github.com/wlcdev/wlc/internal/testrig/stub"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

func TestMain(m *testing.M) { os.Exit(runnertest.Main(m)) }

// weird is the workloads' JOB_WEIRD value (testdata/e2e/workloads/e2e.cue):
// references the uploader's and the job's environments would expand, a
// bash-only form the agent refuses, quotes, a command substitution, a
// backslash and a newline. Every server process must see exactly this.
const weird = "$HOME ${X:-y} ${#A[@]} '\"quoted\"' `id` \\ \nsecond line"

// secret is HF_TOKEN's value in the exporting and the job environment. It
// may reach the server (by name) and nothing else: not the pipeline, not a
// log, not a result file.
const secret = "hf-e2e-secret-5b9e0c"

// workloadNames is the explicit selection, as WORKLOADS would give it.
var workloadNames = []string{"e2e_docker", "e2e_k8s", "e2e_slurm", "e2e_slurm_2node"}

// exportEnv is the environment of `wlc export` and of the uploading agent:
// HOME and X differ from the job's, so an expansion at either end shows.
var exportEnv = map[string]string{
	"HOME":     "/home/uploader",
	"USER":     "uploader",
	"X":        "from-uploader",
	"HF_TOKEN": secret,
}

// k8sSecrets is the cluster's secret store the pod's secretKeyRef reads.
var k8sSecrets = map[string]string{"hf-token-secret/token": secret}

// step is one step of the agent's dry-run JSON.
type step struct {
	Label             string                       `json:"label"`
	Command           string                       `json:"command"`
	Env               map[string]string            `json:"env"`
	Agents            map[string]string            `json:"agents"`
	Plugins           []map[string]json.RawMessage `json:"plugins"`
	Concurrency       int                          `json:"concurrency"`
	ConcurrencyGroup  string                       `json:"concurrency_group"`
	TimeoutInMinutes  int                          `json:"timeout_in_minutes"`
	ArtifactPaths     []string                     `json:"artifact_paths"`
	ConcurrencyMethod string                       `json:"concurrency_method"`
}

// exported is the pipeline, as wlc wrote it and as the agent would upload it.
type exported struct {
	yaml  []byte
	files []backends.Artifact // the scripts the steps download
	json  []byte
	env   map[string]string // the upload's env, which every job of it gets
	plans map[string]plan.Workload
	steps map[string]step // by workload name
}

func repoRoot(t testing.TB) string { return testenv.RepoRoot(t) }

// workloadsArg is the workloads directory as typed from the repo root.
const workloadsArg = "testdata/e2e/workloads"

// export loads testdata/e2e, resolves the selection the way `wlc export`
// does (cmd/wlc/resolve.go) and lowers it through the registry's buildkite
// backend, then runs the agent's dry-run upload on the result.
func export(t *testing.T) *exported {
	t.Helper()
	root := repoRoot(t)
	r := load.Load(cuecontext.New(), filepath.Join(root, workloadsArg), root)
	if len(r.Diags) > 0 {
		var b strings.Builder
		r.Diags.WriteText(&b)
		t.Fatalf("testdata/e2e does not vet clean:\n%s", b.String())
	}
	ov := plan.OverridesFromEnv(func(k string) string { return exportEnv[k] })
	ex := &exported{plans: map[string]plan.Workload{}, steps: map[string]step{}}
	var ws []plan.Workload
	for _, n := range workloadNames {
		lw, ok := r.Workload(n)
		if !ok {
			t.Fatalf("testdata/e2e has no workload %s", n)
		}
		p, err := r.Resolve(lw, ov)
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, p)
		ex.plans[n] = p
	}
	b, err := registry.Lookup("buildkite")
	if err != nil {
		t.Fatal(err)
	}
	arts, err := b.Lower(ws, backends.Options{Env: exportEnv, WorkloadsDir: workloadsArg})
	if err != nil {
		t.Fatalf("buildkite Lower: %v", err)
	}
	if err := backends.CheckArtifacts(arts); err != nil {
		t.Fatal(err)
	}
	for _, a := range arts {
		if buildkite.IsStepFile(a.Path) {
			ex.files = append(ex.files, a)
		}
	}
	if arts[0].Path != buildkite.PipelineFile || len(ex.files) != len(arts)-2 {
		t.Fatalf("buildkite produced %d artifacts, want pipeline.yml, the scripts and upload.sh", len(arts))
	}
	ex.yaml = arts[0].Data
	bktest.ValidateSchema(t, ex.yaml)
	bktest.RoundTrip(t, ex.yaml)
	ex.json = bktest.DryRun(t, ex.yaml, exportEnv)

	var doc struct {
		Env   map[string]string `json:"env"`
		Steps []step            `json:"steps"`
	}
	if err := json.Unmarshal(ex.json, &doc); err != nil {
		t.Fatalf("agent output: %v\n%s", err, ex.json)
	}
	ex.env = doc.Env
	if len(doc.Steps) != len(ws) {
		t.Fatalf("the agent would upload %d steps, want %d", len(doc.Steps), len(ws))
	}
	for i, s := range doc.Steps {
		name := ws[i].Name
		if !strings.HasSuffix(s.Label, " "+name) {
			t.Fatalf("step %d is %q, want workload %s", i, s.Label, name)
		}
		ex.steps[name] = s
	}
	return ex
}

// TestPipeline exports the package once, checks the uploaded pipeline, and
// runs every step (in parallel) as its agent would.
func TestPipeline(t *testing.T) {
	for _, tool := range []string{"bash", "sha256sum", "curl", "python3", "setsid"} {
		testenv.LookPath(t, tool)
	}
	root := repoRoot(t)
	for _, f := range []string{"workloads/wlc.cue", "cue.mod/module.cue"} {
		want, err1 := os.ReadFile(filepath.Join(root, f))
		got, err2 := os.ReadFile(filepath.Join(root, "testdata", "e2e", f))
		if err1 != nil || err2 != nil || !bytes.Equal(got, want) {
			t.Errorf("testdata/e2e/%s is not a copy of the repo's %s (%v, %v)", f, f, err1, err2)
		}
	}
	begin := time.Now()
	ex := export(t)
	t.Logf("export and dry-run upload: %v", time.Since(begin).Round(time.Millisecond))

	for _, where := range []struct {
		what string
		data []byte
	}{{"pipeline.yml", ex.yaml}, {"the agent's upload", ex.json}} {
		if bytes.Contains(where.data, []byte(secret)) {
			t.Errorf("HF_TOKEN's value is in %s", where.what)
		}
	}
	for name, s := range ex.steps {
		p := ex.plans[name]
		if strings.Contains(s.Command, "$") {
			t.Errorf("%s: the uploaded command holds a $", name)
		}
		if s.Agents["queue"] != p.Profile.Queue {
			t.Errorf("%s: agents %v, want queue %s", name, s.Agents, p.Profile.Queue)
		}
		if !slices.Equal(s.ArtifactPaths, []string{"results/" + name + "/**/*"}) {
			t.Errorf("%s: artifact_paths %q", name, s.ArtifactPaths)
		}
		if s.TimeoutInMinutes != p.TimeoutMinutes {
			t.Errorf("%s: timeout_in_minutes %d, want %d", name, s.TimeoutInMinutes, p.TimeoutMinutes)
		}
		slurm := p.Profile.Runtime == "slurm"
		if slurm != (s.ConcurrencyGroup == "wlc/"+p.Profile.Queue && s.Concurrency == 1 && s.ConcurrencyMethod == "eager") {
			t.Errorf("%s: concurrency %d group %q (one Slurm job per login-node queue)", name, s.Concurrency, s.ConcurrencyGroup)
		}
		if (p.Profile.Runtime == "k8s") != (len(s.Plugins) == 1) {
			t.Errorf("%s: %d plugins", name, len(s.Plugins))
		}
	}
	if got := ex.steps["e2e_slurm_2node"].Env["BENCH_ONLY"]; got != "1" {
		t.Errorf("the bench_only step's env BENCH_ONLY = %q, want 1", got)
	}

	t.Run("cli", func(t *testing.T) {
		t.Parallel()
		testCLI(t, ex)
	})
	t.Run("docker", func(t *testing.T) {
		t.Parallel()
		testDocker(t, ex)
	})
	t.Run("k8s", func(t *testing.T) {
		t.Parallel()
		testK8s(t, ex)
	})
	t.Run("slurm", func(t *testing.T) {
		t.Parallel()
		c := slurmtest.Require(t)
		requireShape(t, c)
		t.Run("one_node", func(t *testing.T) {
			t.Parallel()
			testSlurmOneNode(t, c, ex)
		})
		t.Run("two_node", func(t *testing.T) {
			t.Parallel()
			testSlurmTwoNode(t, c, ex)
		})
		t.Run("server_dies", func(t *testing.T) {
			t.Parallel()
			testSlurmServerDies(t, c, ex)
		})
	})
}

// testCLI: the built wlc binary, run as the upload step would run it,
// writes the same pipeline and scripts the test lowered in process.
func testCLI(t *testing.T, ex *exported) {
	testenv.LookPath(t, "go")
	root := repoRoot(t)
	bin := filepath.Join(t.TempDir(), "wlc")
	build := exec.Command("go", "build", "-o", bin, "./cmd/wlc")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/wlc: %v\n%s", err, out)
	}
	env := []string{"WORKLOADS=" + strings.Join(workloadNames, ",")}
	for k, v := range exportEnv {
		env = append(env, k+"="+v)
	}
	out := filepath.Join(t.TempDir(), "export")
	cmd := exec.Command(bin, "export", "--backend", "buildkite", "-o", out, workloadsArg)
	cmd.Dir = root
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("wlc export: %v\n%s", err, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Errorf("wlc export wrote to stderr:\n%s", stderr.String())
	}
	written := map[string][]byte{buildkite.PipelineFile: ex.yaml}
	for _, a := range ex.files {
		written[a.Path] = a.Data
	}
	for p, want := range written {
		if got, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(p))); err != nil || !bytes.Equal(got, want) {
			t.Errorf("wlc export --backend buildkite -o wrote a different %s than the registry's backend lowered (%v)", p, err)
		}
	}
}

// job is one step run as a Buildkite job: a fresh checkout directory, the
// agent's environment, and the stub and fake docker records.
type job struct {
	*runnertest.Job
	// ingest stands in for the dashboards and the agent's secret store,
	// which holds the ingest token the step fetches.
	ingest *ingesttest.Server
	id     string // BUILDKITE_JOB_ID, also in the env of every process of the job
	out    string
	code   int
	took   time.Duration
}

// newJob prepares a checkout and the environment an agent gives the step:
// its own HOME and X (unlike the uploader's), the BUILDKITE_* variables,
// the step's env from the upload, the stubs first on PATH, and extra.
func newJob(t *testing.T, ex *exported, name string, extra ...string) *job {
	t.Helper()
	bin := runnertest.Stubs(t)
	dir := t.TempDir()
	j := &job{
		Job: &runnertest.Job{W: ex.plans[name], Dir: dir, StubLog: filepath.Join(t.TempDir(), "stub-log"),
			DockerState: filepath.Join(t.TempDir(), "docker-state")},
		id:     fmt.Sprintf("e2e-%s-%d", name, time.Now().UnixNano()),
		ingest: ingesttest.New(t, "ingest-token-"+name),
	}
	j.Env = []string{
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + t.TempDir(),
		"X=from-job",
		"LANG=C.UTF-8",
		"BUILDKITE=true",
		"BUILDKITE_JOB_ID=" + j.id,
		"BUILDKITE_BUILD_CHECKOUT_PATH=" + dir,
		"BUILDKITE_LABEL=" + ex.steps[name].Label,
		// The agent exports the step's command too (a few KB): every
		// process of the job, the Slurm job's included, carries it.
		"BUILDKITE_COMMAND=" + ex.steps[name].Command,
		"WLC_STUB_LOG=" + j.StubLog,
		"WLC_FAKE_DOCKER_STATE=" + j.DockerState,
		"WLC_POLL_S=0.2",
		"WLC_STOP_TIMEOUT_S=5",
	}
	j.Env = append(j.Env, runnertest.ClientEnv(bin, dir)...)
	for k, v := range ex.env {
		j.Env = append(j.Env, k+"="+v)
	}
	for k, v := range ex.steps[name].Env {
		j.Env = append(j.Env, k+"="+v)
	}
	// The dashboards' endpoints, and the agent's secret store holding the
	// ingest token (the step fetches it; the agent's env has none), behind
	// the Agent API stand-in holding the export's scripts as the upload
	// step's artifacts, where the step downloads its own.
	api := bktest.NewAgentAPI(t)
	upload := bktest.Job{ID: "e2e-upload-job", StepKey: buildkite.UploadStepKey, Label: ":pipeline: upload"}
	api.AddJob(upload)
	for _, a := range ex.files {
		api.PutArtifact(upload.ID, a.Path, a.Data)
	}
	self := bktest.Job{ID: j.id, Label: ex.steps[name].Label}
	api.AddJob(self)
	for _, kv := range j.ingest.AgentEnv() {
		if endpoint, ok := strings.CutPrefix(kv, "BUILDKITE_AGENT_ENDPOINT="); ok {
			api.ProxyTo(endpoint, ingesttest.AgentToken)
			continue
		}
		if strings.HasPrefix(kv, "BUILDKITE_AGENT_ACCESS_TOKEN=") {
			continue
		}
		j.Env = append(j.Env, kv) // the Job API, where secret get registers the value
	}
	j.Env = append(j.Env, api.Env(self)...)
	j.Env = append(j.Env, "PERF_INGEST_URL="+j.ingest.PerfURL(), "INGEST_URL="+j.ingest.EvalURL())
	j.Env = append(j.Env, extra...)
	return j
}

// run executes the uploaded command the way the agent does (`bash -e -c`,
// in the checkout, its own process group), at most timeout.
func (j *job) run(t *testing.T, command string, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-c", command)
	cmd.Dir = j.Dir
	cmd.Env = j.Env
	out := &runnertest.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	j.took, j.out = time.Since(start), out.String()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("the step did not finish within %v:\n%s", timeout, j.out)
	case err == nil:
	case errors.As(err, &ee):
		j.code = ee.ExitCode()
	default:
		t.Fatalf("running the step: %v\n%s", err, j.out)
	}
	t.Logf("%s: exit %d after %v", j.W.Name, j.code, j.took.Round(time.Millisecond))
	if os.Getenv("WLC_E2E_VERBOSE") == "1" {
		t.Logf("the step's output:\n%s", j.out)
	}
	j.checkScript(t)
}

// runnerOf names the runner backend whose script a step of runtime runs.
var runnerOf = map[string]string{"docker": "docker", "k8s": "native", "slurm": "slurm"}

// checkScript asserts the script the step downloaded into .wlc/scripts/
// and ran (with the shared runtime it sources) is the runner backend's
// script for the workload, byte for byte.
func (j *job) checkScript(t *testing.T) {
	t.Helper()
	r, err := registry.Lookup(runnerOf[j.W.Profile.Runtime])
	if err != nil {
		t.Fatal(err)
	}
	arts, err := r.Lower([]plan.Workload{j.W}, backends.Options{Env: exportEnv, WorkloadsDir: workloadsArg})
	if err != nil || len(arts) != 1 {
		t.Fatalf("%s runner: %v (%d artifacts)", r.Name(), err, len(arts))
	}
	path := filepath.Join(j.Dir, ".wlc", buildkite.ScriptsDir, arts[0].Path)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the step did not write its script: %v\n%s", err, j.out)
	}
	// With the shared runtime it sources (downloaded beside it) inlined.
	if got := runnertest.InlineFile(t, path); !bytes.Equal(got, arts[0].Data) {
		t.Errorf(".wlc/%s/%s differs from the %s runner's script", buildkite.ScriptsDir, arts[0].Path, r.Name())
	}
}

// requireShape checks the local cluster is the one testdata/e2e's Slurm
// profile describes: partition debug, 2 nodes of at least 4 GPUs.
func requireShape(t *testing.T, c *slurmtest.Cluster) {
	t.Helper()
	out, err := c.Command(t.Context(), "sinfo", "-h", "-o", "%P").Output()
	if err != nil {
		t.Fatalf("sinfo: %v", err)
	}
	parts := strings.Fields(strings.ReplaceAll(string(out), "*", ""))
	if !slices.Contains(parts, "debug") || len(c.Nodes) < 2 || c.GPUsPerNode < 4 {
		testenv.Missing(t, fmt.Sprintf("the Slurm cluster has partitions %q, %d nodes of %d GPUs; testdata/e2e needs partition debug and 2 nodes of 4 GPUs (testdata/slurm/start.sh)",
			parts, len(c.Nodes), c.GPUsPerNode))
	}
}

func (j *job) wantExit(t *testing.T, code int) {
	t.Helper()
	if j.code != code {
		t.Fatalf("the step exited %d, want %d:\n%s", j.code, code, j.out)
	}
}

func (j *job) wantOutput(t *testing.T, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(j.out, w) {
			t.Errorf("the step's output lacks %q:\n%s", w, j.out)
		}
	}
}

func (j *job) servers(t *testing.T) []stub.Record {
	t.Helper()
	return runnertest.Find(j.Records(t), "vllm", "serve")
}

// checkResults asserts every bench run's files and medians, the lm_eval and
// bfcl results and the server log under results/<name>/, and that the
// bench client ran as often as the plan says.
func (j *job) checkResults(t *testing.T) {
	t.Helper()
	j.CheckBenchResults(t)
	j.CheckEvalResults(t)
	if got, want := j.BenchInvocations(t), runnertest.WantRuns(j.W); got != want {
		t.Errorf("%d vllm bench serve runs, want %d", got, want)
	}
	if fi, err := os.Stat(filepath.Join(j.Results(), "server.log")); err != nil || fi.Size() == 0 {
		t.Errorf("server.log missing or empty: %v", err)
	}
}

// checkSecret asserts HF_TOKEN's value is nowhere in the step's output or in
// any file of the checkout (the scripts, the results, the job logs).
func (j *job) checkSecret(t *testing.T) {
	t.Helper()
	if strings.Contains(j.out, secret) {
		t.Errorf("HF_TOKEN's value is in the step's output")
	}
	filepath.WalkDir(j.Dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err == nil && bytes.Contains(data, []byte(secret)) {
			t.Errorf("HF_TOKEN's value is written in %s", p)
		}
		return nil
	})
}

// checkWeird asserts every server process got JOB_WEIRD byte for byte.
func checkWeird(t *testing.T, servers []stub.Record) {
	t.Helper()
	if len(servers) == 0 {
		t.Fatal("no server process was recorded")
	}
	for _, s := range servers {
		if got, ok := s.Env["JOB_WEIRD"]; !ok || got != weird {
			t.Errorf("server (pid %d, %s) got JOB_WEIRD=%q, want %q", s.PID, s.Env["SLURMD_NODENAME"], got, weird)
		}
	}
}

// noLeftovers asserts no process of the job outlived the step: nothing
// whose environment carries the job's BUILDKITE_JOB_ID or stub log (the
// step's shell, the script, sbatch and tail, the Slurm job's processes,
// the stubs, the fake container), and no recorded stub process.
func (j *job) noLeftovers(t *testing.T) {
	t.Helper()
	j.NoProcessLeft(t)
	markers := [][]byte{[]byte("BUILDKITE_JOB_ID=" + j.id + "\x00"), []byte("WLC_STUB_LOG=" + j.StubLog + "\x00")}
	// A Slurm job's processes may outlive its end by slurmstepd's KillWait.
	if left := slurmtest.AfterKillGrace(func() []string { return processesWith(markers) }); len(left) > 0 {
		t.Errorf("processes of job %s outlived the step:\n%s", j.id, strings.Join(left, "\n"))
	}
}

// processesWith lists the live processes whose environment holds one of
// markers ("NAME=value\x00"), this test process left out.
func processesWith(markers [][]byte) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() || !slurmtest.ProcessAlive(pid) {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		env = append([]byte{0}, env...)
		for _, m := range markers {
			if bytes.Contains(env, append([]byte{0}, m...)) {
				cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
				out = append(out, fmt.Sprintf("%d: %s", pid, bytes.ReplaceAll(bytes.TrimRight(cmdline, "\x00"), []byte{0}, []byte{' '})))
				break
			}
		}
	}
	return out
}

// testDocker runs the docker step on the "docker host": the fake docker
// and the stubs first on PATH, HF_TOKEN in the agent's environment.
func testDocker(t *testing.T, ex *exported) {
	j := newJob(t, ex, "e2e_docker", "HF_TOKEN="+secret)
	// vllm bench writes to the container's /tmp/<container> (WLC_BENCH_DIR's
	// default), which is the host's with the fake docker.
	t.Cleanup(func() { os.RemoveAll("/tmp/wlc-e2e_docker-" + j.id) })
	j.run(t, ex.steps["e2e_docker"].Command, stepTimeout)
	j.wantExit(t, 0)
	j.wantOutput(t, "server ready after", "done bench sweep-conc-1", "done bench sweep-conc-4", "done bench chat-conc-2",
		"done lm_eval gsm8k", "done bfcl", "stopping and removing container")
	j.checkResults(t)
	j.CheckIngest(t, j.ingest, false)
	// One node, TP8: every perf row is divided by the 8 GPUs.
	for _, r := range j.ingest.Rows("perf") {
		if r.Body["gpu_count"] != float64(8) || r.Body["tp"] != float64(8) || r.Body["is_multinode"] != "false" {
			t.Errorf("the 1-node TP8 job's perf row: gpu_count %v, tp %v, is_multinode %v", r.Body["gpu_count"], r.Body["tp"], r.Body["is_multinode"])
		}
	}

	servers := j.servers(t)
	if len(servers) != 1 {
		t.Fatalf("%d servers, want 1", len(servers))
	}
	checkWeird(t, servers)
	if got := servers[0].Env["HF_TOKEN"]; got != secret {
		t.Errorf("the container got HF_TOKEN=%q, want the agent's value (passed by name)", got)
	}

	// The container was started, stopped and removed.
	calls, err := stub.DockerCalls(j.DockerState)
	if err != nil {
		t.Fatal(err)
	}
	var name string
	for _, c := range calls {
		if c.Argv[0] == "run" {
			name, _ = stub.Flag(c.Argv, "--name")
			if joined := strings.Join(c.Argv, " "); strings.Contains(joined, secret) || !strings.Contains(joined, "-e HF_TOKEN ") {
				t.Errorf("docker run passes HF_TOKEN other than by name: %s", joined)
			}
		}
	}
	if name == "" {
		t.Fatalf("no docker run in %v", calls)
	}
	last := calls[len(calls)-1].Argv
	if !slices.Equal(last, []string{"rm", "-f", name}) {
		t.Errorf("the last docker call is %q, want rm -f %s", last, name)
	}
	if _, err := os.Stat(filepath.Join(j.DockerState, "containers", name)); !os.IsNotExist(err) {
		t.Errorf("container %s still exists (%v)", name, err)
	}
	j.checkSecret(t)
	j.noLeftovers(t)
}

// testK8s runs the k8s step's command the way the pod runs it: the pod is
// not simulated, but its container env (from the uploaded plugin config,
// the secret resolved from the cluster's store) is the job's, and vllm is
// the stub on PATH.
func testK8s(t *testing.T, ex *exported) {
	s := ex.steps["e2e_k8s"]
	var cfg struct {
		PodSpec struct {
			Containers []struct {
				Image     string `json:"image"`
				Resources struct {
					Limits map[string]any `json:"limits"`
				} `json:"resources"`
				Env []struct {
					Name      string `json:"name"`
					Value     string `json:"value"`
					ValueFrom *struct {
						SecretKeyRef struct{ Name, Key string } `json:"secretKeyRef"`
					} `json:"valueFrom"`
				} `json:"env"`
			} `json:"containers"`
		} `json:"podSpec"`
	}
	if len(s.Plugins) != 1 {
		t.Fatalf("the k8s step has %d plugins, want the kubernetes plugin", len(s.Plugins))
	}
	raw := s.Plugins[0]["github.com/buildkite-plugins/kubernetes-buildkite-plugin"]
	if err := json.Unmarshal(raw, &cfg); err != nil || len(cfg.PodSpec.Containers) != 1 {
		t.Fatalf("the uploaded k8s plugin config has no podSpec with one container (%v):\n%s", err, raw)
	}
	c := cfg.PodSpec.Containers[0]
	if fmt.Sprint(c.Resources.Limits["nvidia.com/gpu"]) != "4" || c.Image != ex.plans["e2e_k8s"].Image.Pull {
		t.Errorf("pod container: image %q, limits %v; want %s and 4 GPUs", c.Image, c.Resources.Limits, ex.plans["e2e_k8s"].Image.Pull)
	}
	var podEnv []string
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			ref := e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
			v, ok := k8sSecrets[ref]
			if !ok {
				t.Fatalf("pod env %s reads secret %s, which the cluster does not have", e.Name, ref)
			}
			podEnv = append(podEnv, e.Name+"="+v)
			continue
		}
		podEnv = append(podEnv, e.Name+"="+e.Value)
	}

	j := newJob(t, ex, "e2e_k8s", podEnv...)
	j.run(t, s.Command, stepTimeout)
	j.wantExit(t, 0)
	j.wantOutput(t, "server ready after", "done bench sweep-conc-4", "done lm_eval gsm8k", "done bfcl", "stopping the server (process group")
	j.checkResults(t)
	j.CheckIngest(t, j.ingest, false)
	servers := j.servers(t)
	if len(servers) != 1 {
		t.Fatalf("%d servers, want 1", len(servers))
	}
	checkWeird(t, servers)
	for k, v := range map[string]string{"HF_TOKEN": secret, "HF_HOME": "/tmp/wlc-e2e-hf", "VLLM_USAGE_SOURCE": "ci-test"} {
		if got := servers[0].Env[k]; got != v {
			t.Errorf("the server got %s=%q, want %q", k, got, v)
		}
	}
	j.checkSecret(t)
	j.noLeftovers(t)
}

// slurmJob runs a Slurm step on the "login node" (this machine): the
// agent's environment pointed at the local cluster, the stubs first on PATH
// (sbatch exports the submitting environment to the job, and every srun
// step inherits it).
func slurmJob(t *testing.T, c *slurmtest.Cluster, ex *exported, name string, extra ...string) (*job, string) {
	t.Helper()
	j := newJob(t, ex, name, append([]string{"SLURM_CONF=" + c.Conf, "HF_TOKEN=" + secret}, extra...)...)
	j.run(t, ex.steps[name].Command, stepTimeout)
	m := regexp.MustCompile(`wlc: Slurm job (\d+);`).FindStringSubmatch(j.out)
	if m == nil {
		t.Fatalf("the step names no Slurm job:\n%s", j.out)
	}
	return j, m[1]
}

// checkSlurm asserts the job ended in state with exit code, its log went
// to results/<name>/slurm-<id>.out and was streamed into the step.
func checkSlurm(t *testing.T, c *slurmtest.Cluster, j *job, id, state, code string) {
	t.Helper()
	if st, ec := c.Wait(t, id, 30*time.Second); st != state || ec != code {
		t.Errorf("job %s ended %s %s, want %s %s\n%s", id, st, ec, state, code, j.out)
	}
	log, err := os.ReadFile(filepath.Join(j.Results(), "slurm-"+id+".out"))
	if err != nil {
		t.Fatalf("the job log is not in results/%s: %v\n%s", j.W.Name, err, j.out)
	}
	// The log's lines reached the step's output (tail -F copies them).
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	for _, l := range []string{lines[0], lines[len(lines)-1]} {
		if !strings.Contains(j.out, l) {
			t.Errorf("the step's output lacks the job log line %q:\n%s", l, j.out)
		}
	}
	j.wantOutput(t, fmt.Sprintf("wlc: Slurm job %s exited %s\n", id, strings.Split(code, ":")[0]))
}

func testSlurmOneNode(t *testing.T, c *slurmtest.Cluster, ex *exported) {
	j, id := slurmJob(t, c, ex, "e2e_slurm")
	j.wantExit(t, 0)
	checkSlurm(t, c, j, id, "COMPLETED", "0:0")
	j.wantOutput(t, "server ready after", "done bench sweep-conc-1", "done bench sweep-conc-4", "done bench chat-conc-2",
		"done lm_eval gsm8k", "done bfcl")
	j.checkResults(t)
	j.CheckIngest(t, j.ingest, false)
	servers := j.servers(t)
	if len(servers) != 1 {
		t.Fatalf("%d servers, want 1", len(servers))
	}
	checkWeird(t, servers)
	s := servers[0]
	if s.Env["SLURM_JOB_ID"] != id || s.Env["HF_TOKEN"] != secret || s.Env["CUDA_VISIBLE_DEVICES"] != "0,1,2,3" {
		t.Errorf("the server ran with SLURM_JOB_ID=%q CUDA_VISIBLE_DEVICES=%q and HF_TOKEN %v; want job %s, 4 GPUs and the agent's token",
			s.Env["SLURM_JOB_ID"], s.Env["CUDA_VISIBLE_DEVICES"], s.Env["HF_TOKEN"] == secret, id)
	}
	if stub.Has(s.Argv, "--nnodes") || stub.Has(s.Argv, "--headless") {
		t.Errorf("a 1-node server got multi-node flags: %q", s.Argv)
	}
	j.checkSecret(t)
	j.noLeftovers(t)
}

func testSlurmTwoNode(t *testing.T, c *slurmtest.Cluster, ex *exported) {
	j, id := slurmJob(t, c, ex, "e2e_slurm_2node")
	j.wantExit(t, 0)
	checkSlurm(t, c, j, id, "COMPLETED", "0:0")
	j.wantOutput(t, "server ready after", "done bench short-conc-2")
	j.CheckBenchResults(t)
	// TP2 × DP4 over 2 nodes: every throughput per GPU is divided by 8.
	j.CheckIngest(t, j.ingest, false)
	if rows := j.ingest.Rows("perf"); len(rows) != 1 || rows[0].Body["gpu_count"] != float64(8) || rows[0].Body["is_multinode"] != "true" {
		t.Errorf("the 2-node TP2×DP4 job's perf rows: %v", rows)
	}
	servers := j.servers(t)
	if len(servers) != 2 {
		t.Fatalf("%d servers, want one per node", len(servers))
	}
	checkWeird(t, servers)
	byRank := map[string]stub.Record{}
	for _, s := range servers {
		byRank[s.Flags["node-rank"]] = s
	}
	head, worker := byRank["0"], byRank["1"]
	if h, w := head.Env["SLURMD_NODENAME"], worker.Env["SLURMD_NODENAME"]; h == w || !slices.Contains(c.Nodes, h) || !slices.Contains(c.Nodes, w) {
		t.Fatalf("ranks 0 and 1 ran on %q and %q, want two different nodes of %q", h, w, c.Nodes)
	}
	for rank, s := range byRank {
		if s.Flags["nnodes"] != "2" || s.Flags["master-addr"] != head.Env["SLURMD_NODENAME"] || s.Env["SLURM_JOB_ID"] != id {
			t.Errorf("rank %s: --nnodes %q --master-addr %q job %q; want 2, the head node %s, job %s",
				rank, s.Flags["nnodes"], s.Flags["master-addr"], s.Env["SLURM_JOB_ID"], head.Env["SLURMD_NODENAME"], id)
		}
		if got, _ := stub.Flag(s.Argv, "--data-parallel-size"); got != "4" {
			t.Errorf("rank %s: --data-parallel-size %q, want 4", rank, got)
		}
	}
	if stub.Has(head.Argv, "--headless") || !stub.Has(worker.Argv, "--headless") {
		t.Errorf("--headless belongs to rank 1 only: rank 0 %q, rank 1 %q", head.Argv, worker.Argv)
	}
	for _, b := range runnertest.Find(j.Records(t), "vllm", "bench") {
		if b.Env["SLURMD_NODENAME"] != head.Env["SLURMD_NODENAME"] {
			t.Errorf("the bench client ran on %s, not on the head node", b.Env["SLURMD_NODENAME"])
		}
	}
	j.checkSecret(t)
	j.noLeftovers(t)
}

// testSlurmServerDies: every server rank "loads" for 60 s but dies after
// 1 s with status 3; the job fails at once with the server's status and the
// step exits with it, long before the startup timeout.
func testSlurmServerDies(t *testing.T, c *slurmtest.Cluster, ex *exported) {
	j, id := slurmJob(t, c, ex, "e2e_slurm", "WLC_STUB_STARTUP_DELAY=60", "WLC_STUB_DIE_AFTER=1", "WLC_STUB_DIE_CODE=3")
	j.wantExit(t, 3)
	checkSlurm(t, c, j, id, "FAILED", "3:0")
	j.wantOutput(t, "the server exited (status 3) before it was ready")
	f := c.Job(t, id)
	start, err1 := time.Parse("2006-01-02T15:04:05", f["StartTime"])
	end, err2 := time.Parse("2006-01-02T15:04:05", f["EndTime"])
	if err1 != nil || err2 != nil {
		t.Fatalf("job times: %v %v", err1, err2)
	}
	t.Logf("the job of the dying server ran %v", end.Sub(start))
	// Well under the stub's 60 s load, so a job that waited for the dead
	// server fails, with room for a loaded machine's slow job start and
	// teardown (16-23 s seen at load average 12).
	if end.Sub(start) > 40*time.Second {
		t.Errorf("a job whose server died after 1 s ran %v (the server would have been ready after 60 s)", end.Sub(start))
	}
	if n := len(runnertest.Find(j.Records(t), "vllm", "bench")); n != 0 {
		t.Errorf("%d benchmarks ran against a dead server", n)
	}
	j.checkSecret(t)
	j.noLeftovers(t)
}

// stepTimeout bounds one step's run: about a minute on an idle machine
// (client tools installed, every bench and eval against the stubs), far
// more on a loaded one.
const stepTimeout = 7 * time.Minute
