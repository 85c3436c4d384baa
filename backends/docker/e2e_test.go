package docker_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wlcdev/wlc/backends/docker"
	"github.com/wlcdev/wlc/backends/goldentest"
	"github.com/wlcdev/wlc/backends/runner/runnertest"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/results/ingest/ingesttest"
	"github.com/wlcdev/wlc/internal/testrig/stub"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

func TestMain(m *testing.M) { os.Exit(runnertest.Main(m)) }

func workload(t *testing.T, archive string) plan.Workload {
	t.Helper()
	testenv.LookPath(t, "curl")
	testenv.LookPath(t, "python3")
	ws := goldentest.Open(t, filepath.Join(testenv.RepoRoot(t), "testdata", "backends", "docker", archive), nil).Plans
	if len(ws) != 1 {
		t.Fatalf("%s: %d workloads, want 1", archive, len(ws))
	}
	return ws[0]
}

// dockerCalls returns the fake docker's argv log, each call joined by spaces.
func dockerCalls(t *testing.T, j *runnertest.Job) [][]string {
	t.Helper()
	cs, err := stub.DockerCalls(j.DockerState)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for _, c := range cs {
		out = append(out, c.Argv)
	}
	return out
}

// checkTeardown asserts the container was stopped and removed (the last
// calls of the fake docker's log), its state is gone, and no stub process
// is left.
func checkTeardown(t *testing.T, j *runnertest.Job) {
	t.Helper()
	calls := dockerCalls(t, j)
	var name string
	for _, c := range calls {
		if c[0] == "run" {
			name, _ = stub.Flag(c, "--name")
		}
	}
	if name == "" || !strings.HasPrefix(name, "wlc-"+j.W.Name+"-") {
		t.Fatalf("no docker run with a wlc container name in %q", calls)
	}
	n := len(calls)
	if n < 2 || !slices.Equal(calls[n-2][:1], []string{"stop"}) || !slices.Equal(calls[n-1], []string{"rm", "-f", name}) {
		t.Errorf("teardown: last docker calls %q, want stop then rm -f %s", calls[max(0, n-2):], name)
	}
	if _, err := os.Stat(filepath.Join(j.DockerState, "containers", name)); !os.IsNotExist(err) {
		t.Errorf("container %s still exists (%v)", name, err)
	}
	j.NoProcessLeft(t)
}

// TestEndToEnd runs the sweep workload's script against the stubs: the
// server becomes ready after a startup delay, every bench repetition and
// median lands in results/, lm_eval and bfcl run, provenance.json says
// what ran (the image's digest among it), and teardown leaves nothing
// behind.
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	w := workload(t, "sweep.txtar")
	// The dashboards: a local ingest server with its token, and the
	// nightly and Buildkite tags in the job's environment.
	srv := ingesttest.New(t, "tok-e2e")
	j := runnertest.NewJob(t, docker.Backend{}, w, append(srv.Env(), "WLC_STUB_STARTUP_DELAY=0.5", "WLC_STUB_WORKERS=2",
		"NIGHTLY=1", "BUILDKITE_BUILD_NUMBER=42")...)
	res := j.Run(t, jobTimeout)
	if res.Code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", res.Code, res.Output)
	}
	t.Logf("sweep job took %v:\n%s", res.Took, res.Output)
	// provenance.json: the digest of the image run, as docker reports it.
	p := j.CheckProvenance(t, j.JobHash(t), 0)
	if want := "vllm/vllm-openai@" + stub.ImageDigest(w.Image.Pull); p.Image.Digest == nil || *p.Image.Digest != want {
		t.Errorf("provenance image digest %v, want %s", p.Image.Digest, want)
	}
	for _, want := range []string{"server ready after", "done bench 128-in-16-out-conc-8", "done lm_eval gsm8k", "done bfcl"} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("output lacks %q:\n%s", want, res.Output)
		}
	}
	j.CheckBenchResults(t)
	j.CheckEvalResults(t)
	j.CheckIngest(t, srv, false)
	j.CheckTagged(t, srv, "42")
	if got, want := j.BenchInvocations(t), runnertest.WantRuns(w); got != want {
		t.Errorf("%d bench invocations, want %d", got, want)
	}
	log, _ := os.ReadFile(filepath.Join(j.Results(), "server.log"))
	if !strings.Contains(string(log), "Application startup complete") {
		t.Errorf("server.log lacks the server's output:\n%s", log)
	}

	// The container: GPUs, port on localhost, HF cache, env and secrets by name.
	var run []string
	for _, c := range dockerCalls(t, j) {
		if c[0] == "run" {
			run = c
		}
	}
	joined := strings.Join(run, " ")
	for _, want := range []string{"--gpus 2", "--ipc=host", "-v /tmp/wlc-test-hf:/tmp/wlc-test-hf",
		"-e HF_TOKEN -e WLC_TEST_SECRET",
		"--entrypoint bash vllm/vllm-openai:nightly -c ",
		" wlc-preflight vllm HF_HOME=/tmp/wlc-test-hf VLLM_ENGINE_READY_TIMEOUT_S=3600 VLLM_LOGGING_LEVEL=DEBUG --tensor-parallel-size ",
		" -- vllm serve Qwen/Qwen3-8B --tensor-parallel-size 2"} {
		if !strings.Contains(joined, want) {
			t.Errorf("docker run lacks %q: %s", want, joined)
		}
	}
	if strings.Contains(joined, "hf-secret-value") {
		t.Errorf("a secret's value is on the docker command line: %s", joined)
	}
	// The client tools went into a venv in the container, by docker exec
	// while the server loaded.
	var tools []string
	for _, c := range dockerCalls(t, j) {
		if c[0] == "exec" && slices.Contains(c, "wlc-tools") {
			tools = c
		}
	}
	if i := slices.Index(tools, "wlc-tools"); i < 0 || !strings.HasPrefix(tools[i+1], "/tmp/wlc-qwen3_sweep_h100-") || tools[i+2] != "lm_eval" {
		t.Errorf("no docker exec of the tools install into the container's venv: %q", tools)
	}
	serve := runnertest.Find(j.Records(t), "vllm", "serve")
	if len(serve) != 1 {
		t.Fatalf("%d servers started, want 1", len(serve))
	}
	if serve[0].Env["HF_TOKEN"] != "hf-secret-value" || serve[0].Env["WLC_TEST_SECRET"] != "second-secret" {
		t.Errorf("secrets did not reach the container by name: %v", serve[0].Env)
	}
	// The workload's env is the server's and the clients', as arguments of
	// env rather than the container's (docker exec would hand it to the
	// job's own tools there).
	for _, r := range append(serve, runnertest.Find(j.Records(t), "vllm", "bench")...) {
		if r.Env["HF_HOME"] != "/tmp/wlc-test-hf" || r.Env["VLLM_LOGGING_LEVEL"] != "DEBUG" {
			t.Errorf("vllm %s lacks the workload's env: %v", r.Mode, r.Env)
		}
	}
	if port, _ := stub.Flag(run, "-p"); port != "127.0.0.1:"+serve[0].Flags["port"]+":"+serve[0].Flags["port"] {
		t.Errorf("published %q, server port %s", port, serve[0].Flags["port"])
	}
	checkTeardown(t, j)
}

// TestServerDiesWhileLoading: the server exits with 7 before it is ready;
// the script stops waiting at once, prints the server's last log lines,
// exits 7, runs no step and removes the container.
func TestServerDiesWhileLoading(t *testing.T) {
	t.Parallel()
	w := workload(t, "sweep.txtar")
	j := runnertest.NewJob(t, docker.Backend{}, w,
		"WLC_STUB_STARTUP_DELAY=60", "WLC_STUB_DIE_AFTER=0.5", "WLC_STUB_DIE_CODE=7")
	res := j.Run(t, jobTimeout)
	if res.Code != 7 {
		t.Fatalf("exit %d, want the server's 7:\n%s", res.Code, res.Output)
	}
	// Well before the 60 s "load" ends, counted from the server's start
	// (in the container, the preflight runs first, which takes a while on
	// a busy machine).
	if starts := runnertest.Find(j.Records(t), "vllm", "serve"); len(starts) != 1 {
		t.Errorf("%d server starts, want 1", len(starts))
	} else if took := time.Since(starts[0].Time); took > 30*time.Second {
		t.Errorf("took %v after the server started to notice it died", took)
	}
	for _, want := range []string{"the server exited (status 7) before it was ready", "  | ERROR stub vllm: dying"} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("output lacks %q:\n%s", want, res.Output)
		}
	}
	if n := j.BenchInvocations(t); n != 0 {
		t.Errorf("%d bench runs after the server died", n)
	}
	checkTeardown(t, j)
}

// TestPreflightImageLacksFlag: the image's vLLM has no --max-num-seqs,
// which the workload passes: the container's first step refuses it, so
// vllm serve never starts, and the job fails with the preflight's status
// and message (in the container's last log lines).
func TestPreflightImageLacksFlag(t *testing.T) {
	t.Parallel()
	w := workload(t, "sweep.txtar")
	j := runnertest.NewJob(t, docker.Backend{}, w, "WLC_STUB_VLLM_VERSION=0.11.0", "WLC_STUB_VLLM_LACKS=--max-num-seqs", "WLC_STUB_STARTUP_DELAY=60")
	res := j.Run(t, jobTimeout)
	if res.Code != 2 {
		t.Fatalf("exit %d, want the preflight's 2:\n%s", res.Code, res.Output)
	}
	if !strings.Contains(res.Output, "the image's vLLM 0.11.0 has no option --max-num-seqs") {
		t.Errorf("output does not name the flag and the version:\n%s", res.Output)
	}
	if res.Took > 30*time.Second {
		t.Errorf("the job took %v to refuse the flag", res.Took)
	}
	if n := len(runnertest.Find(j.Records(t), "vllm", "serve")); n != 0 {
		t.Errorf("%d servers started", n)
	}
	checkTeardown(t, j)
}

// TestBenchFails: every vllm bench serve exits 5. The script keeps the
// loaded server for the remaining steps (lm_eval, bfcl still run) and exits
// with the first failure's status, 5.
func TestBenchFails(t *testing.T) {
	t.Parallel()
	w := workload(t, "sweep.txtar")
	j := runnertest.NewJob(t, docker.Backend{}, w, "WLC_STUB_BENCH_FAIL=5")
	res := j.Run(t, jobTimeout)
	if res.Code != 5 {
		t.Fatalf("exit %d, want 5:\n%s", res.Code, res.Output)
	}
	if !strings.Contains(res.Output, "FAILED bench 128-in-16-out-conc-1 (exit 5)") {
		t.Errorf("output does not name the failed step:\n%s", res.Output)
	}
	j.CheckEvalResults(t)
	checkTeardown(t, j)
}

// TestServerDiesMidRun: the server dies after 3 requests, during the first
// benchmark. The incomplete result fails that step, every later step is
// skipped, and the script exits non-zero.
func TestServerDiesMidRun(t *testing.T) {
	t.Parallel()
	w := workload(t, "sweep.txtar")
	j := runnertest.NewJob(t, docker.Backend{}, w, "WLC_STUB_DIE_AFTER_REQUESTS=3", "WLC_STUB_DIE_CODE=9")
	res := j.Run(t, jobTimeout)
	if res.Code == 0 {
		t.Fatalf("exit 0 although the server died:\n%s", res.Output)
	}
	for _, want := range []string{"FAILED bench 128-in-16-out-conc-1", "the server exited (status 9)", "skipped lm_eval gsm8k: the server is gone", "skipped bfcl"} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("output lacks %q:\n%s", want, res.Output)
		}
	}
	if n := len(runnertest.Find(j.Records(t), "lm_eval", "eval")); n != 0 {
		t.Errorf("lm_eval ran against a dead server")
	}
	checkTeardown(t, j)
}

// TestInjection runs the injection workload: every hostile value reaches
// the server, the bench client, lm_eval and bfcl verbatim as one argv entry
// or env value, and no payload runs.
func TestInjection(t *testing.T) {
	t.Parallel()
	w := workload(t, "injection.txtar")
	pwned, _ := filepath.Glob("/tmp/wlc-pwned-*")
	for _, p := range pwned {
		os.Remove(p)
	}
	j := runnertest.NewJob(t, docker.Backend{}, w)
	res := j.Run(t, jobTimeout)
	if res.Code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", res.Code, res.Output)
	}
	runnertest.CheckInjection(t, j, res)
	checkTeardown(t, j)
}

// TestSGLangEndToEnd runs the SGLang workload's script against the stub
// sglang: docker runs `python3 -m sglang.launch_server` in the image (it
// has no entrypoint) with every typed option, each bench_serving
// repetition's JSONL and row land in results/ with their median, lm_eval
// runs against the same server, and teardown leaves nothing behind.
func TestSGLangEndToEnd(t *testing.T) {
	t.Parallel()
	w := workload(t, "sglang.txtar")
	j := runnertest.NewJob(t, docker.Backend{}, w, "WLC_STUB_STARTUP_DELAY=0.5")
	res := j.Run(t, 180*time.Second)
	if res.Code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", res.Code, res.Output)
	}
	for _, want := range []string{"server ready after", "done bench 128-in-16-out-conc-4", "done lm_eval gsm8k"} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("output lacks %q:\n%s", want, res.Output)
		}
	}
	j.CheckBenchResults(t)
	j.CheckEvalResults(t)
	if got, want := j.BenchInvocations(t), runnertest.WantRuns(w); got != want {
		t.Errorf("%d bench_serving invocations, want %d", got, want)
	}
	var run []string
	for _, c := range dockerCalls(t, j) {
		if c[0] == "run" {
			run = c
		}
	}
	joined := strings.Join(run, " ")
	// The image's first step checks lm_eval, then runs the server.
	want := " -- python3 -m sglang.launch_server --model-path zai-org/GLM-5.2-FP8 --tp-size 8 --dp-size 8 --ep-size 8 --enable-dp-attention"
	if !strings.Contains(joined, want) {
		t.Errorf("docker run lacks %q: %s", want, joined)
	}
	serve := runnertest.Find(j.Records(t), "sglang", "launch_server")
	if len(serve) != 1 {
		t.Fatalf("%d SGLang servers started, want 1", len(serve))
	}
	f := serve[0].Flags
	if f["tp-size"] != "8" || f["dp-size"] != "8" || f["enable-dp-attention"] != "true" || f["kv-cache-dtype"] != "fp8_e4m3" || f["host"] != "0.0.0.0" {
		t.Errorf("the server read %v", f)
	}
	if serve[0].Env["NVSHMEM_DISABLE_IB"] != "1" || serve[0].Env["HF_TOKEN"] != "hf-secret-value" {
		t.Errorf("env and secrets did not reach the container: %v", serve[0].Env)
	}
	if _, set := serve[0].Env["VLLM_ENGINE_READY_TIMEOUT_S"]; set {
		t.Errorf("an SGLang server got vLLM's VLLM_ENGINE_READY_TIMEOUT_S")
	}
	checkTeardown(t, j)
}

// jobTimeout bounds a job run: seconds on an idle machine, much more on a
// loaded one (the tests assert their own timing where it matters).
const jobTimeout = 6 * time.Minute
