package native_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wlcdev/wlc/backends/goldentest"
	"github.com/wlcdev/wlc/backends/native"
	"github.com/wlcdev/wlc/backends/runner/runnertest"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/results/ingest/ingesttest"
	"github.com/wlcdev/wlc/internal/testrig/stub"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

func TestMain(m *testing.M) { os.Exit(runnertest.Main(m)) }

// TestGolden is the backends' golden test (backends/goldentest); every
// script parses with mvdan.cc/sh and passes shellcheck; split for Buildkite
// (runner.Split), it is the same script (runnertest.CheckSplit).
func TestGolden(t *testing.T) {
	goldentest.Run(t, native.Backend{}, goldentest.Checks{Mode: 0o755, Artifact: runnertest.CheckScript, Case: runnertest.CheckSplit(native.Backend{})})
}

func workload(t *testing.T, archive string) plan.Workload {
	t.Helper()
	for _, tool := range []string{"curl", "python3", "setsid"} {
		testenv.LookPath(t, tool)
	}
	ws := goldentest.Open(t, filepath.Join(testenv.RepoRoot(t), "testdata", "backends", "native", archive), nil).Plans
	if len(ws) != 1 {
		t.Fatalf("%s: %d workloads, want 1", archive, len(ws))
	}
	return ws[0]
}

func wantOutput(t *testing.T, res runnertest.Result, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(res.Output, w) {
			t.Errorf("output lacks %q:\n%s", w, res.Output)
		}
	}
}

// TestEndToEnd runs the sweep workload natively against the stub vllm: the
// server (with two worker processes) becomes ready after a delay, every
// repetition and median lands in results/, lm_eval and bfcl run,
// provenance.json says what ran, and teardown kills the server's whole
// process group.
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	w := workload(t, "sweep.txtar")
	// The dashboards: a local ingest server with its token, and the
	// nightly and Buildkite tags in the job's environment.
	srv := ingesttest.New(t, "tok-e2e")
	j := runnertest.NewJob(t, native.Backend{}, w, append(srv.Env(), "WLC_STUB_STARTUP_DELAY=0.5", "WLC_STUB_WORKERS=2",
		"NIGHTLY=1", "BUILDKITE_BUILD_NUMBER=42")...)
	res := j.Run(t, jobTimeout)
	if res.Code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", res.Code, res.Output)
	}
	// A pod's image is not inspected from inside it: no digest.
	if p := j.CheckProvenance(t, j.JobHash(t), 0); p.Image.Digest != nil {
		t.Errorf("provenance image digest %q on a native job", *p.Image.Digest)
	}
	t.Logf("sweep job took %v", res.Took)
	wantOutput(t, res, "server ready after", "done bench 128-in-16-out-conc-8", "done lm_eval gsm8k", "done bfcl", "stopping the server (process group")
	j.CheckBenchResults(t)
	j.CheckEvalResults(t)
	j.CheckIngest(t, srv, false)
	j.CheckTagged(t, srv, "42")
	if got, want := j.BenchInvocations(t), runnertest.WantRuns(w); got != want {
		t.Errorf("%d bench invocations, want %d", got, want)
	}
	rs := j.Records(t)
	serve := runnertest.Find(rs, "vllm", "serve")
	if len(serve) != 1 {
		t.Fatalf("%d servers, want 1", len(serve))
	}
	s := serve[0]
	if s.Flags["host"] != "127.0.0.1" {
		t.Errorf("server bound to %q, want 127.0.0.1", s.Flags["host"])
	}
	for k, v := range map[string]string{"HF_HOME": "/tmp/wlc-test-hf", "VLLM_LOGGING_LEVEL": "DEBUG", "HF_TOKEN": "hf-secret-value", "WLC_TEST_SECRET": "second-secret"} {
		if s.Env[k] != v {
			t.Errorf("server env %s = %q, want %q", k, s.Env[k], v)
		}
	}
	if n := len(runnertest.Find(rs, "vllm", "worker")); n != 2 {
		t.Errorf("%d workers recorded, want 2", n)
	}
	log, _ := os.ReadFile(filepath.Join(j.Results(), "server.log"))
	if !strings.Contains(string(log), "Application startup complete") {
		t.Errorf("server.log lacks the server's output:\n%s", log)
	}
	j.NoProcessLeft(t)
}

// TestServerDiesWhileLoading: the server exits 7 before it is ready; the
// script stops waiting at once, prints its last log lines and exits 7.
func TestServerDiesWhileLoading(t *testing.T) {
	t.Parallel()
	w := workload(t, "sweep.txtar")
	j := runnertest.NewJob(t, native.Backend{}, w,
		"WLC_STUB_STARTUP_DELAY=60", "WLC_STUB_DIE_AFTER=0.5", "WLC_STUB_DIE_CODE=7", "WLC_STUB_WORKERS=1")
	res := j.Run(t, jobTimeout)
	if res.Code != 7 {
		t.Fatalf("exit %d, want the server's 7:\n%s", res.Code, res.Output)
	}
	// Well before the 60 s "load" ends, counted from the server's start
	// (the client tools are checked first, which takes a while on a busy
	// machine).
	if starts := runnertest.Find(j.Records(t), "vllm", "serve"); len(starts) != 1 {
		t.Errorf("%d server starts, want 1", len(starts))
	} else if took := time.Since(starts[0].Time); took > 30*time.Second {
		t.Errorf("took %v after the server started to notice it died", took)
	}
	wantOutput(t, res, "the server exited (status 7) before it was ready", "  | ERROR stub vllm: dying")
	if n := j.BenchInvocations(t); n != 0 {
		t.Errorf("%d bench runs after the server died", n)
	}
	j.NoProcessLeft(t) // the orphaned worker too
}

// TestBenchFails: every bench exits 5; lm_eval and bfcl still run on the
// loaded server and the script exits 5.
func TestBenchFails(t *testing.T) {
	t.Parallel()
	w := workload(t, "sweep.txtar")
	j := runnertest.NewJob(t, native.Backend{}, w, "WLC_STUB_BENCH_FAIL=5")
	res := j.Run(t, jobTimeout)
	if res.Code != 5 {
		t.Fatalf("exit %d, want 5:\n%s", res.Code, res.Output)
	}
	wantOutput(t, res, "FAILED bench 128-in-16-out-conc-1 (exit 5)", "done lm_eval gsm8k", "done bfcl")
	j.CheckEvalResults(t)
	j.NoProcessLeft(t)
}

// TestServerDiesMidRun: the server dies (status 9) after 3 requests; the
// first benchmark fails, the rest is skipped, the exit status is non-zero.
func TestServerDiesMidRun(t *testing.T) {
	t.Parallel()
	w := workload(t, "sweep.txtar")
	j := runnertest.NewJob(t, native.Backend{}, w, "WLC_STUB_DIE_AFTER_REQUESTS=3", "WLC_STUB_DIE_CODE=9")
	res := j.Run(t, jobTimeout)
	if res.Code == 0 {
		t.Fatalf("exit 0 although the server died:\n%s", res.Output)
	}
	wantOutput(t, res, "FAILED bench 128-in-16-out-conc-1", "the server exited (status 9)", "skipped lm_eval gsm8k: the server is gone")
	j.NoProcessLeft(t)
}

// TestStubbornServer: a server that ignores SIGTERM is killed after
// WLC_STOP_TIMEOUT_S, with its workers.
func TestStubbornServer(t *testing.T) {
	t.Parallel()
	w := workload(t, "sweep.txtar")
	w.Bench, w.LMEval, w.BFCL, w.Tools = nil, nil, nil, nil
	j := runnertest.NewJob(t, native.Backend{}, w, "WLC_STUB_IGNORE_TERM=1", "WLC_STUB_WORKERS=1", "WLC_STOP_TIMEOUT_S=1")
	res := j.Run(t, jobTimeout)
	if res.Code != 0 {
		t.Fatalf("exit %d:\n%s", res.Code, res.Output)
	}
	wantOutput(t, res, "ignored (WLC_STUB_IGNORE_TERM)")
	j.NoProcessLeft(t)
}

// TestInterrupted: SIGTERM to the script while it waits for the server
// TestCancelWithinGrace: a cancelled job (SIGTERM, as a CI agent sends it)
// whose server ignores TERM is gone, server included, within the 10 s a
// Buildkite agent waits before its SIGKILL (the default cancel grace
// period): the default stop timeout leaves the KILL to the script, so the
// server, in its own session, is not orphaned.
func TestCancelWithinGrace(t *testing.T) {
	t.Parallel()
	w := workload(t, "sweep.txtar")
	// The script's own default stop timeout (the test jobs' 5 s unset).
	j := runnertest.NewJob(t, native.Backend{}, w, "WLC_STUB_STARTUP_DELAY=60", "WLC_STUB_WORKERS=1", "WLC_STUB_IGNORE_TERM=1", "WLC_STOP_TIMEOUT_S=")
	var at time.Time
	res := j.RunAndSignal(t, jobTimeout, func(out string) bool {
		if strings.Contains(out, "waiting up to") {
			at = time.Now()
			return true
		}
		return false
	})
	if took := time.Since(at); took > 10*time.Second {
		t.Errorf("the cancelled job took %v to end, longer than a CI agent's 10 s grace:\n%s", took, res.Output)
	}
	if res.Code != 143 {
		t.Fatalf("exit %d, want 143:\n%s", res.Code, res.Output)
	}
	wantOutput(t, res, "stopping the server")
	j.NoProcessLeft(t)
}

// tears everything down and exits 143.
func TestInterrupted(t *testing.T) {
	t.Parallel()
	w := workload(t, "sweep.txtar")
	j := runnertest.NewJob(t, native.Backend{}, w, "WLC_STUB_STARTUP_DELAY=60", "WLC_STUB_WORKERS=1")
	res := j.RunAndSignal(t, jobTimeout, func(out string) bool { return strings.Contains(out, "waiting up to") })
	if res.Code != 143 {
		t.Fatalf("exit %d, want 143:\n%s", res.Code, res.Output)
	}
	wantOutput(t, res, "terminated", "stopping the server")
	j.NoProcessLeft(t)
}

// TestInjection: hostile values arrive verbatim; nothing executes.
func TestInjection(t *testing.T) {
	t.Parallel()
	w := workload(t, "injection.txtar")
	j := runnertest.NewJob(t, native.Backend{}, w)
	res := j.Run(t, jobTimeout)
	if res.Code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", res.Code, res.Output)
	}
	runnertest.CheckInjection(t, j, res)
	j.NoProcessLeft(t)
}

// TestSGLangEndToEnd runs the SGLang workload natively: `python3 -m
// sglang.launch_server` (the stub python3 runs the stub sglang, which
// refuses any option the real parser would) serves, every bench_serving
// repetition and median lands in results/, lm_eval runs, and teardown
// stops the server.
func TestSGLangEndToEnd(t *testing.T) {
	t.Parallel()
	w := workload(t, "sglang.txtar")
	srv := ingesttest.New(t, "tok-sglang")
	j := runnertest.NewJob(t, native.Backend{}, w, append(srv.Env(), "WLC_STUB_STARTUP_DELAY=0.5")...)
	res := j.Run(t, jobTimeout)
	if res.Code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", res.Code, res.Output)
	}
	wantOutput(t, res, "starting python3 -m sglang.launch_server", "server ready after", "done bench 128-in-16-out-conc-4", "done lm_eval gsm8k", "stopping the server (process group")
	j.CheckBenchResults(t)
	j.CheckEvalResults(t)
	// bench_serving's rows, tagged framework sglang (perf-eval's SGLang
	// branch), with its own throughput fields.
	j.CheckIngest(t, srv, false)
	if got, want := j.BenchInvocations(t), runnertest.WantRuns(w); got != want {
		t.Errorf("%d bench_serving invocations, want %d", got, want)
	}
	serve := runnertest.Find(j.Records(t), "sglang", "launch_server")
	if len(serve) != 1 || serve[0].Flags["model"] != "zai-org/GLM-5.2-FP8" || serve[0].Flags["ep-size"] != "8" {
		t.Fatalf("SGLang servers: %+v", serve)
	}
	j.NoProcessLeft(t)
}

// jobTimeout bounds a job run: seconds on an idle machine, much more on a
// loaded one (the tests assert their own timing where it matters).
const jobTimeout = 6 * time.Minute

// TestToolsAndDatasets: the image ships lm_eval (image_tools): the job
// checks it and installs the others with one pip call, retried after a
// failure, into the job's own virtual environment while the server loads
// (the image's Python is not written, the venv is gone after the job);
// SPEED-Bench's part is prepared where the bench runs and passed as
// --dataset-path; BFCL runs its leaf and its group, each scored in
// lm_eval's results format.
func TestToolsAndDatasets(t *testing.T) {
	t.Parallel()
	w := workload(t, "tools.txtar")
	bin := runnertest.Stubs(t)
	j := runnertest.NewJob(t, native.Backend{}, w, "WLC_STUB_PIP_FAILS=1", "WLC_STUB_STARTUP_DELAY=1")
	site := filepath.Join(j.Dir, "pip-site")
	j.Env = append(j.Env, "PYTHONPATH="+stub.Python(bin, site, "lm-eval"))
	res := j.Run(t, jobTimeout)
	if res.Code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", res.Code, res.Output)
	}
	rs := j.Records(t)
	pips, serve := runnertest.Find(rs, "pip", "install"), runnertest.Find(rs, "vllm", "serve")
	if len(pips) != 2 || len(serve) != 1 {
		t.Fatalf("%d pip installs (want 2: a failure, a retry) and %d servers:\n%s", len(pips), len(serve), res.Output)
	}
	want := []string{"install", "--quiet", "datasets", "numpy", "pandas", "tiktoken", "bfcl-eval", "soundfile"}
	venvs, _ := filepath.Glob(filepath.Join(j.Dir, ".wlc-tools-*"))
	for _, p := range pips {
		if !slices.Equal(p.Argv, want) {
			t.Errorf("pip %q, want %q (lm_eval is the image's)", p.Argv, want)
		}
		if v := p.Flags["venv"]; filepath.Dir(v) != j.Dir || !strings.HasPrefix(filepath.Base(v), ".wlc-tools-") {
			t.Errorf("pip installed into %q (venv %q), want the job's own venv in %s", p.Flags["site"], v, j.Dir)
		}
	}
	if _, err := os.Stat(site); err == nil || len(venvs) != 0 {
		t.Errorf("the image's site %s was written (%v) or the job's venv %v was left behind", site, err, venvs)
	}
	if strings.Contains(res.Output, "lm_eval: installing") {
		t.Error("lm_eval, which the image ships, was installed")
	}
	wantOutput(t, res, "client tools ready after", "done prepare speed_bench/qualitative/coding", "done bfcl multi_turn")
	log, _ := os.ReadFile(filepath.Join(j.Results(), "tools.log"))
	for _, w := range []string{"pip install datasets numpy pandas tiktoken bfcl-eval soundfile failed (attempt 1 of 3)",
		"every client tool is there: speed_bench lm_eval bfcl"} {
		if !strings.Contains(string(log), w) {
			t.Errorf("tools.log lacks %q:\n%s", w, log)
		}
	}

	data, err := os.ReadFile(filepath.Join(j.Dir, "data", "speed_bench", "qualitative-coding", "qualitative.jsonl"))
	if err != nil || strings.Count(string(data), "\n") != 3 || !strings.Contains(string(data), `"messages": [{"role": "user"`) {
		t.Errorf("the coding rows of qualitative, as messages: %v\n%s", err, data)
	}
	bench := runnertest.Find(rs, "vllm", "bench")
	if len(bench) != 1 {
		t.Fatalf("%d bench runs", len(bench))
	}
	if p, _ := stub.Flag(bench[0].Argv, "--dataset-path"); p != filepath.Join(j.Dir, "data", "speed_bench", "qualitative-coding") {
		t.Errorf("--dataset-path %q", p)
	}
	j.CheckBenchResults(t)
	j.CheckEvalResults(t)
	for _, leaf := range []string{"multi_turn_base", "multi_turn_miss_param"} {
		if fs, _ := filepath.Glob(filepath.Join(j.Results(), "lm_eval", "bfcl_"+leaf, "results_*.json")); len(fs) != 1 {
			t.Errorf("no lm_eval results for the group's leaf %s", leaf)
		}
	}
	for _, g := range runnertest.Find(rs, "bfcl", "generate") {
		if g.Flags["step_limit"] != "5" {
			t.Errorf("bfcl generate ran with step limit %s, want 5", g.Flags["step_limit"])
		}
	}
	j.NoProcessLeft(t)
}

// TestImageLacksTool: the profile says the image ships lm_eval but it does
// not: while the server loads (slowly), the job fails naming it, installs
// nothing and stops the server within seconds.
func TestImageLacksTool(t *testing.T) {
	t.Parallel()
	w := workload(t, "tools.txtar")
	j := runnertest.NewJob(t, native.Backend{}, w, "WLC_STUB_STARTUP_DELAY=60")
	res := j.Run(t, jobTimeout)
	if res.Code != 127 {
		t.Fatalf("exit %d, want 127:\n%s", res.Code, res.Output)
	}
	wantOutput(t, res, "lm_eval: the profile says the image ships it (image_tools), but python3 cannot import lm_eval",
		"the client tools' install failed (status 127, missing: lm_eval)", "stopping the server")
	if res.Took > 30*time.Second {
		t.Errorf("the job took %v to fail; the server loads for 60 s", res.Took)
	}
	if n := len(runnertest.Find(j.Records(t), "pip", "install")); n != 0 {
		t.Errorf("%d pip installs", n)
	}
	j.NoProcessLeft(t)
}

// TestToolInstallFails: pip fails three times while the server loads: the
// job stops the server and fails at once, naming every missing tool.
func TestToolInstallFails(t *testing.T) {
	t.Parallel()
	w := workload(t, "sweep.txtar")
	j := runnertest.NewJob(t, native.Backend{}, w, "WLC_STUB_PIP_FAILS=3", "WLC_STUB_STARTUP_DELAY=60")
	res := j.Run(t, jobTimeout)
	if res.Code != 127 {
		t.Fatalf("exit %d, want 127:\n%s", res.Code, res.Output)
	}
	wantOutput(t, res, "failed 3 times", "the client tools' install failed (status 127, missing: lm_eval bfcl)", "stopping the server")
	if res.Took > 30*time.Second {
		t.Errorf("the job took %v to fail; the server loads for 60 s", res.Took)
	}
	if n := len(runnertest.Find(j.Records(t), "pip", "install")); n != 3 {
		t.Errorf("%d pip attempts, want 3", n)
	}
	j.NoProcessLeft(t)
}

// TestToolsLeaveServerPython: bfcl-eval pins numpy 1.26.4 while the
// image's Python, which the server imports, has numpy 2.2.6. The install
// brings numpy 1.26.4 into the tools' venv only: the image's site is
// byte-for-byte unchanged after the job and the server ran with its own
// numpy.
func TestToolsLeaveServerPython(t *testing.T) {
	t.Parallel()
	w := workload(t, "tools.txtar")
	bin := runnertest.Stubs(t)
	j := runnertest.NewJob(t, native.Backend{}, w, "WLC_STUB_SERVER_IMPORTS=numpy", "WLC_STUB_STARTUP_DELAY=1")
	site := filepath.Join(j.Dir, "pip-site")
	image := filepath.Join(bin, "python", "dists", "numpy")
	j.Env = append(j.Env, "PYTHONPATH="+stub.Python(bin, site, "lm-eval", "numpy"))
	before := treeHash(t, image)
	res := j.Run(t, jobTimeout)
	if res.Code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", res.Code, res.Output)
	}
	rs := j.Records(t)
	pips, serve := runnertest.Find(rs, "pip", "install"), runnertest.Find(rs, "vllm", "serve")
	if len(pips) != 1 || len(serve) != 1 {
		t.Fatalf("%d pip installs and %d servers, want 1 each:\n%s", len(pips), len(serve), res.Output)
	}
	if got := pips[0].Flags["installed"]; !strings.Contains(got, "numpy==1.26.4") || pips[0].Flags["venv"] == "" {
		t.Errorf("pip installed %q into venv %q; want bfcl-eval's numpy==1.26.4 in the tools' venv", got, pips[0].Flags["venv"])
	}
	if got := serve[0].Flags["import:numpy"]; got != "2.2.6" {
		t.Errorf("the server imported numpy %s, want the image's 2.2.6", got)
	}
	if after := treeHash(t, image); after != before {
		t.Errorf("the image's numpy changed during the job")
	}
	if _, err := os.Stat(site); !os.IsNotExist(err) {
		t.Errorf("the image's site %s was written: %v", site, err)
	}
}

// TestPreflightImageLacksFlag: the image's vLLM (0.11.0 here) has no
// --max-num-seqs, which the workload passes: the job fails in seconds,
// before any server or install starts, naming the flag and the version.
func TestPreflightImageLacksFlag(t *testing.T) {
	t.Parallel()
	w := workload(t, "sweep.txtar")
	j := runnertest.NewJob(t, native.Backend{}, w, "WLC_STUB_VLLM_VERSION=0.11.0", "WLC_STUB_VLLM_LACKS=--max-num-seqs", "WLC_STUB_STARTUP_DELAY=60")
	res := j.Run(t, jobTimeout)
	if res.Code != 2 {
		t.Fatalf("exit %d, want 2:\n%s", res.Code, res.Output)
	}
	wantOutput(t, res, "the image's vLLM 0.11.0 has no option --max-num-seqs", "the server was not started")
	if res.Took > 10*time.Second {
		t.Errorf("the job took %v to refuse the flag", res.Took)
	}
	rs := j.Records(t)
	if n := len(runnertest.Find(rs, "vllm", "serve")) + len(runnertest.Find(rs, "pip", "install")); n != 0 {
		t.Errorf("%d servers or installs started", n)
	}
}

// treeHash is a digest of every file's path and content under dir
// (Python's bytecode caches aside: importing writes them).
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "__pycache__" {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		data, err := os.ReadFile(p)
		fmt.Fprintf(h, "%s %d\n", p, len(data))
		h.Write(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestServerDiesDuringInstall: the server dies while the client tools
// install (slowly; it dies as pip starts): the job fails at once with the
// server's status, and the install, pip included, is stopped and its venv
// removed.
func TestServerDiesDuringInstall(t *testing.T) {
	t.Parallel()
	w := workload(t, "sweep.txtar")
	mark := filepath.Join(t.TempDir(), "pip-started")
	j := runnertest.NewJob(t, native.Backend{}, w, "WLC_STUB_PIP_DELAY=60", "WLC_STUB_STARTUP_DELAY=60",
		"WLC_STUB_PIP_MARK="+mark, "WLC_STUB_DIE_ON_FILE="+mark, "WLC_STUB_DIE_CODE=3")
	res := j.Run(t, jobTimeout)
	if res.Code != 3 {
		t.Fatalf("exit %d, want the server's 3:\n%s", res.Code, res.Output)
	}
	if res.Took > 40*time.Second {
		t.Errorf("the job took %v; the server died as pip (60 s) started", res.Took)
	}
	if n := len(runnertest.Find(j.Records(t), "pip", "install")); n != 1 {
		t.Errorf("%d pip installs, want the 1 that was running", n)
	}
	j.NoProcessLeft(t)
	if venvs, _ := filepath.Glob(filepath.Join(j.Dir, ".wlc-tools-*")); len(venvs) != 0 {
		t.Errorf("the job's venv was left behind: %v", venvs)
	}
}
