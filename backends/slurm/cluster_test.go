package slurm_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wlcdev/wlc/backends/runner/runnertest"
	"github.com/wlcdev/wlc/internal/testrig/slurmtest"
	"github.com/wlcdev/wlc/internal/testrig/stub"
)

// jobTimeout bounds one job; they take a few seconds each (the stub server
// starts at once), the rest is queueing: the five jobs are exclusive on a
// 2-node cluster, so they run one after another, behind other tests' jobs
// and on a loaded machine.
const jobTimeout = 4 * time.Minute

func TestSbatchTestOnly(t *testing.T) {
	c := slurmtest.Require(t)
	for name, p := range scripts(t) {
		if err := c.TestOnly(t, p); err != nil {
			t.Errorf("sbatch --test-only %s: %v", name, err)
		}
	}
}

// run is one submitted job: its submission directory (the checkout stand-in
// holding results/<workload>/) and where its stubs record themselves.
type run struct {
	name, id, submit, records string
	start                     time.Time
}

// submit copies script into a fresh submission directory, creates
// results/<name>/ as the script's header says, and submits it with the
// stubs first on PATH (and env, NAME=VALUE).
func submit(t *testing.T, c *slurmtest.Cluster, bin, name, script string, env ...string) *run {
	t.Helper()
	r := &run{name: name, submit: t.TempDir(), records: t.TempDir()}
	if err := os.MkdirAll(filepath.Join(r.submit, "results", name), 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(r.submit, name+".sbatch")
	if err := os.WriteFile(p, data, 0o755); err != nil {
		t.Fatal(err)
	}
	export := runnertest.SlurmExport(bin, r.records, "1", append(runnertest.ClientEnv(bin, r.submit), env...)...)
	r.start = time.Now()
	r.id = c.Sbatch(t, p, "--chdir="+r.submit, export)
	return r
}

func (r *run) file(parts ...string) string {
	return filepath.Join(append([]string{r.submit, "results", r.name}, parts...)...)
}

func (r *run) log(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, pat := range []string{"slurm-*.out", "slurm-*.err", "server*.log", "prefill-*.log", "decode-*.log", "router.log"} {
		files, _ := filepath.Glob(r.file(pat))
		for _, f := range files {
			data, _ := os.ReadFile(f)
			b.WriteString("--- " + filepath.Base(f) + "\n" + string(data))
		}
	}
	return b.String()
}

func (r *run) wait(t *testing.T, c *slurmtest.Cluster, want, wantCode string) time.Duration {
	t.Helper()
	state, code := c.Wait(t, r.id, jobTimeout)
	took := time.Since(r.start)
	t.Logf("job %s (%s): %s exit %s after %v", r.id, r.name, state, code, took.Round(time.Millisecond))
	if state != want || code != wantCode {
		t.Fatalf("job %s (%s) ended %s exit %s, want %s exit %s\n%s", r.id, r.name, state, code, want, wantCode, r.log(t))
	}
	return took
}

// servers are the stub `vllm serve` records of the run.
func (r *run) records_(t *testing.T, program, mode string) []stub.Record {
	t.Helper()
	all, err := stub.Records(r.records)
	if err != nil {
		t.Fatal(err)
	}
	var out []stub.Record
	for _, rec := range all {
		if rec.Program == program && rec.Mode == mode {
			out = append(out, rec)
		}
	}
	return out
}

func (r *run) noLeftovers(t *testing.T, bin string) {
	t.Helper()
	if left := slurmtest.Survivors(t, regexp.QuoteMeta(bin)+`|`+regexp.QuoteMeta(r.submit)); len(left) > 0 {
		t.Errorf("job %s (%s) left processes behind %v after it ended:\n%s", r.id, r.name, slurmtest.KillGrace, strings.Join(left, "\n"))
	}
}

// TestJobsOnCluster submits the 1-node, 2-node and 2-node Pyxis scripts
// with the stub vllm/lm_eval/bfcl first on PATH, a 2-node job whose
// server dies while loading, and a 2-node SGLang job (stub python3 and
// sglang).
func TestJobsOnCluster(t *testing.T) {
	c := slurmtest.Require(t)
	bin := stub.Build(t, t.TempDir())
	sc := scripts(t)
	begin := time.Now()

	one := submit(t, c, bin, "one_node", sc["one_node"])
	two := submit(t, c, bin, "two_node", sc["two_node"])
	pyx := submit(t, c, bin, "two_node_pyxis", sc["two_node_pyxis"], "WLC_TEST_SECRET=s3")
	// Rank 0 takes 60 s to "load" while every rank dies after 1 s with
	// status 3: the job must fail at once, not at the startup timeout
	// (120 s) or the time limit (10 min).
	dying := submit(t, c, bin, "two_node", sc["two_node"], "WLC_STUB_STARTUP_DELAY=60", "WLC_STUB_DIE_AFTER=1", "WLC_STUB_DIE_CODE=3")
	sg := submit(t, c, bin, "sglang_two_node", sc["sglang_two_node"])

	var wg sync.WaitGroup
	for _, tc := range []struct {
		r     *run
		check func(t *testing.T, r *run)
	}{
		{one, checkOneNode},
		{two, func(t *testing.T, r *run) { checkTwoNode(t, r, false) }},
		{pyx, func(t *testing.T, r *run) { checkTwoNode(t, r, true) }},
		{dying, checkDying},
		{sg, checkSGLangTwoNode},
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(tc.r.name+"-"+tc.r.id, func(t *testing.T) {
				if tc.r == dying {
					tc.r.wait(t, c, "FAILED", "3:0")
					// Measured from the job's start: it may have queued
					// behind the other exclusive jobs.
					f := c.Job(t, tc.r.id)
					start, err1 := time.Parse("2006-01-02T15:04:05", f["StartTime"])
					end, err2 := time.Parse("2006-01-02T15:04:05", f["EndTime"])
					if err1 != nil || err2 != nil {
						t.Fatalf("job times: %v %v", err1, err2)
					}
					t.Logf("the dying job ran %v", end.Sub(start))
					if end.Sub(start) > 15*time.Second {
						t.Errorf("a job whose server died after 1 s ran %v before failing", end.Sub(start))
					}
				} else {
					tc.r.wait(t, c, "COMPLETED", "0:0")
				}
				tc.check(t, tc.r)
				tc.r.noLeftovers(t, bin)
			})
		}()
	}
	wg.Wait()
	t.Logf("5 jobs in %v", time.Since(begin).Round(time.Millisecond))
}

// injected is the one_node archive's hostile extra_args value.
const injected = `{"note": "$(touch /tmp/wlc-slurm-pwned) ` + "`id`" + ` 'q' ; \n"}`

func checkOneNode(t *testing.T, r *run) {
	servers := r.records_(t, "vllm", "serve")
	if len(servers) != 1 {
		t.Fatalf("%d vllm serve processes, want 1\n%s", len(servers), r.log(t))
	}
	s := servers[0]
	for _, flag := range []string{"--nnodes", "--node-rank", "--master-addr", "--headless", "--distributed-executor-backend"} {
		if stub.Has(s.Argv, flag) {
			t.Errorf("a 1-node server got %s: %q", flag, s.Argv)
		}
	}
	if got := s.Env["CUDA_VISIBLE_DEVICES"]; got != "0,1,2,3" {
		t.Errorf("server CUDA_VISIBLE_DEVICES = %q, want 0,1,2,3", got)
	}
	if got := s.Env["JOB_NOTE"]; got != "it's $HOME; `rm -rf /`" {
		t.Errorf("JOB_NOTE reached the server as %q", got)
	}
	if got := s.Env["HF_TOKEN"]; got != "hf-secret-value" {
		t.Errorf("the secret HF_TOKEN reached the server as %q, want the submitting environment's value", got)
	}
	if got, _ := stub.Flag(s.Argv, "--override-generation-config"); got != injected {
		t.Errorf("extra_args token reached the server as %q, want %q", got, injected)
	}
	if _, err := os.Stat("/tmp/wlc-slurm-pwned"); err == nil {
		t.Errorf("a command substitution in extra_args ran")
	}
	benches := r.records_(t, "vllm", "bench")
	// short-conc-1, short-conc-2, rep-conc-2 × 3
	if len(benches) != 5 {
		t.Errorf("%d vllm bench serve runs, want 5", len(benches))
	}
	for _, b := range benches {
		if b.Env["SLURMD_NODENAME"] != s.Env["SLURMD_NODENAME"] {
			t.Errorf("bench ran on %s, the server on %s", b.Env["SLURMD_NODENAME"], s.Env["SLURMD_NODENAME"])
		}
		if _, ok := b.Env["CUDA_VISIBLE_DEVICES"]; ok {
			t.Errorf("the client step got GPUs: CUDA_VISIBLE_DEVICES=%s", b.Env["CUDA_VISIBLE_DEVICES"])
		}
	}
	for _, f := range []string{
		"bench-short-conc-1.json", "bench-short-conc-2.json",
		"bench-rep-conc-2-run-1.json", "bench-rep-conc-2-run-2.json", "bench-rep-conc-2-run-3.json", "bench-rep-conc-2.json",
		"server.log", "bfcl/simple_python/test_case_ids_to_generate.json",
	} {
		if fi, err := os.Stat(r.file(f)); err != nil || fi.Size() == 0 {
			t.Errorf("result %s missing or empty: %v\n%s", f, err, r.log(t))
		}
	}
	// lm_eval's results and BFCL's, in lm_eval's format, where the
	// clients wrote them (the submission directory).
	for _, pattern := range []string{"lm_eval/gsm8k/*/results_*.json", "lm_eval/bfcl_simple_python/results_*.json"} {
		if fs, _ := filepath.Glob(r.file(pattern)); len(fs) != 1 {
			t.Errorf("%d files match %s\n%s", len(fs), pattern, r.log(t))
		}
	}
	// The client tools went into this job's own venv, on the head node
	// where the clients run, once: one pip call, plus one per failed
	// attempt tools.log reports (a retry is pip's, not the job's, doing).
	// The venv is gone after the job; the image's site was not written.
	pips := r.records_(t, "pip", "install")
	tools, _ := os.ReadFile(r.file("tools.log"))
	venv := filepath.Join(r.submit, ".wlc-tools-"+r.id)
	if want := 1 + strings.Count(string(tools), "failed (attempt"); len(pips) != want {
		t.Errorf("%d pip installs, want %d (tools.log):\n%s", len(pips), want, tools)
	}
	for _, p := range pips {
		if p.Flags["venv"] != venv || p.Env["SLURMD_NODENAME"] != s.Env["SLURMD_NODENAME"] {
			t.Errorf("pip installed into venv %q on %s, want %s on the server's node %s", p.Flags["venv"], p.Env["SLURMD_NODENAME"], venv, s.Env["SLURMD_NODENAME"])
		}
	}
	if _, err := os.Stat(venv); !os.IsNotExist(err) {
		t.Errorf("the job's venv %s is still there: %v", venv, err)
	}
	if _, err := os.Stat(filepath.Join(r.submit, "pip-site")); !os.IsNotExist(err) {
		t.Errorf("the image's site was written: %v", err)
	}
	// Each bench run, the lm_eval task and the BFCL category left their
	// dashboard rows (no token in this job: kept, not sent).
	if got, _ := filepath.Glob(r.file("ingest/perf/*.json")); len(got) != 3 {
		t.Errorf("%d perf rows kept, want one per bench run (3)\n%s", len(got), r.log(t))
	}
	if got, _ := filepath.Glob(r.file("ingest/eval/bfcl_simple_python-*.json")); len(got) != 1 {
		t.Errorf("%d BFCL eval rows kept, want 1\n%s", len(got), r.log(t))
	}
	if !strings.Contains(r.log(t), "ingest: INGEST_BEARER_TOKEN is empty") {
		t.Errorf("the job log does not say the rows were not sent:\n%s", r.log(t))
	}
	if data, _ := os.ReadFile(r.file("bench-rep-conc-2.json")); !strings.Contains(string(data), `"method": "median"`) {
		t.Errorf("bench-rep-conc-2.json is not the median of the repetitions:\n%s", data)
	}
	if log := r.log(t); strings.Contains(log, "hf-secret-value") {
		t.Errorf("the secret's value appears in the job log")
	}
}

func checkTwoNode(t *testing.T, r *run, pyxis bool) {
	servers := r.records_(t, "vllm", "serve")
	if len(servers) != 2 {
		t.Fatalf("%d vllm serve processes, want 2 (one per node)\n%s", len(servers), r.log(t))
	}
	if !pyxis {
		checkProvenance(t, r, scriptJobHash(t, "two_node"))
	}
	byRank := map[string]stub.Record{}
	for _, s := range servers {
		byRank[s.Flags["node-rank"]] = s
	}
	head, worker := byRank["0"], byRank["1"]
	if head.Env["SLURMD_NODENAME"] == "" || head.Env["SLURMD_NODENAME"] == worker.Env["SLURMD_NODENAME"] {
		t.Fatalf("ranks ran on %q and %q, want one per node", head.Env["SLURMD_NODENAME"], worker.Env["SLURMD_NODENAME"])
	}
	for rank, s := range byRank {
		if s.Flags["nnodes"] != "2" || s.Flags["master-addr"] != head.Env["SLURMD_NODENAME"] {
			t.Errorf("rank %s: --nnodes %q --master-addr %q, want 2 and the head node %s", rank, s.Flags["nnodes"], s.Flags["master-addr"], head.Env["SLURMD_NODENAME"])
		}
		if got, _ := stub.Flag(s.Argv, "--distributed-executor-backend"); got != "mp" {
			t.Errorf("rank %s: --distributed-executor-backend %q, want mp", rank, got)
		}
		if s.Env["CUDA_VISIBLE_DEVICES"] != "0,1,2,3" {
			t.Errorf("rank %s: CUDA_VISIBLE_DEVICES %q, want 0,1,2,3", rank, s.Env["CUDA_VISIBLE_DEVICES"])
		}
	}
	if stub.Has(head.Argv, "--headless") || !stub.Has(worker.Argv, "--headless") {
		t.Errorf("--headless: rank 0 %v, rank 1 %v; want only rank 1", stub.Has(head.Argv, "--headless"), stub.Has(worker.Argv, "--headless"))
	}
	if !stub.Has(head.Argv, "--port") || stub.Has(worker.Argv, "--port") {
		t.Errorf("--port belongs to rank 0 only: rank 0 %q, rank 1 %q", head.Argv, worker.Argv)
	}
	benches := r.records_(t, "vllm", "bench")
	if len(benches) != 1 {
		t.Fatalf("%d bench runs, want 1", len(benches))
	}
	if benches[0].Env["SLURMD_NODENAME"] != head.Env["SLURMD_NODENAME"] {
		t.Errorf("the client ran on %s, not on the head node %s", benches[0].Env["SLURMD_NODENAME"], head.Env["SLURMD_NODENAME"])
	}
	if fi, err := os.Stat(r.file("bench-short-conc-2.json")); err != nil || fi.Size() == 0 {
		t.Errorf("bench result missing: %v\n%s", err, r.log(t))
	}
	if !pyxis {
		return
	}
	for _, s := range append(servers, benches[0]) {
		who := s.Mode + " on " + s.Env["SLURMD_NODENAME"]
		for k, want := range map[string]string{
			"WLC_FAKEPYXIS_IMAGE":         "nvcr.io#nvidia/vllm:26.08-py3",
			"WLC_FAKEPYXIS_MOUNTS":        "/tmp:/tmp,/root/.cache/huggingface:/root/.cache/huggingface:ro," + r.submit + ":" + r.submit,
			"WLC_FAKEPYXIS_WORKDIR":       r.submit,
			"WLC_FAKEPYXIS_NO_REMAP_ROOT": "1",
			"WLC_TEST_SECRET":             "s3",
			"HF_HOME":                     "/root/.cache/huggingface",
		} {
			if got := s.Env[k]; got != want {
				t.Errorf("%s: %s=%q, want %q", who, k, got, want)
			}
		}
	}
	if got := benches[0].Env["WLC_FAKEPYXIS_NAME"]; got != "wlc-client" {
		t.Errorf("client step container name %q, want wlc-client", got)
	}
}

func checkDying(t *testing.T, r *run) {
	log := r.log(t)
	if !strings.Contains(log, "before it was ready") {
		t.Errorf("the job log does not say the server died before it was ready:\n%s", log)
	}
	if benches := r.records_(t, "vllm", "bench"); len(benches) != 0 {
		t.Errorf("a benchmark ran against a dead server")
	}
}

// checkSGLangTwoNode: one launch_server per node, both with --nnodes 2 and
// the head's --dist-init-addr, only rank 0 with --port; bench_serving ran
// on the head node and its JSONL and row are in the results directory.
func checkSGLangTwoNode(t *testing.T, r *run) {
	servers := r.records_(t, "sglang", "launch_server")
	if len(servers) != 2 {
		t.Fatalf("%d SGLang servers, want 2 (one per node)\n%s", len(servers), r.log(t))
	}
	byRank := map[string]stub.Record{}
	for _, s := range servers {
		byRank[s.Flags["node-rank"]] = s
	}
	head, worker := byRank["0"], byRank["1"]
	if head.Env["SLURMD_NODENAME"] == "" || head.Env["SLURMD_NODENAME"] == worker.Env["SLURMD_NODENAME"] {
		t.Fatalf("ranks ran on %q and %q, want one per node", head.Env["SLURMD_NODENAME"], worker.Env["SLURMD_NODENAME"])
	}
	for rank, s := range byRank {
		addr := s.Flags["dist-init-addr"]
		if s.Flags["nnodes"] != "2" || !strings.HasPrefix(addr, head.Env["SLURMD_NODENAME"]+":") || s.Flags["tp-size"] != "8" {
			t.Errorf("rank %s: --nnodes %q --dist-init-addr %q --tp-size %q, want 2, the head node and 8", rank, s.Flags["nnodes"], addr, s.Flags["tp-size"])
		}
	}
	if !stub.Has(head.Argv, "--port") || stub.Has(worker.Argv, "--port") {
		t.Errorf("--port belongs to rank 0 only: rank 0 %q, rank 1 %q", head.Argv, worker.Argv)
	}
	benches := r.records_(t, "sglang", "bench_serving")
	if len(benches) != 1 {
		t.Fatalf("%d bench_serving runs, want 1\n%s", len(benches), r.log(t))
	}
	if benches[0].Env["SLURMD_NODENAME"] != head.Env["SLURMD_NODENAME"] {
		t.Errorf("the client ran on %s, not on the head node %s", benches[0].Env["SLURMD_NODENAME"], head.Env["SLURMD_NODENAME"])
	}
	for _, f := range []string{"bench-short-conc-2.json", "bench-short-conc-2.jsonl"} {
		if fi, err := os.Stat(r.file(f)); err != nil || fi.Size() == 0 {
			t.Errorf("bench result %s missing: %v\n%s", f, err, r.log(t))
		}
	}
}

// checkProvenance: the 2-node job's provenance.json names its hash, the
// engine version its server logged, the GPUs the head node reports (the
// stub nvidia-smi's 8), a phase for the server's load, each step and the
// teardown, and no secret's value.
func checkProvenance(t *testing.T, r *run, hash string) {
	t.Helper()
	data, err := os.ReadFile(r.file("provenance.json"))
	if err != nil {
		t.Fatalf("provenance.json: %v\n%s", err, r.log(t))
	}
	if strings.Contains(string(data), "hf-secret-value") {
		t.Errorf("provenance.json holds HF_TOKEN's value:\n%s", data)
	}
	var p struct {
		JobHash       string `json:"job_hash"`
		EngineVersion string `json:"engine_version"`
		GPUs          struct {
			Vendor string
			Count  int
		} `json:"gpus"`
		Phases []struct{ Name string } `json:"phases"`
		Steps  []struct {
			Name   string `json:"name"`
			Status int    `json:"status"`
		} `json:"steps"`
		ExitClass string `json:"exit_class"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatalf("provenance.json: %v\n%s", err, data)
	}
	phases := map[string]bool{}
	for _, ph := range p.Phases {
		phases[ph.Name] = true
	}
	if p.JobHash != hash || p.EngineVersion != "0.13.0" || p.GPUs.Vendor != "nvidia" || p.GPUs.Count != 8 ||
		!phases["server load"] || !phases["teardown"] || len(p.Steps) == 0 || p.ExitClass != "ok" {
		t.Errorf("provenance.json lacks what ran:\n%s", data)
	}
	for _, s := range p.Steps {
		if !phases[s.Name] || s.Status != 0 {
			t.Errorf("step %s: status %d, phase recorded %v", s.Name, s.Status, phases[s.Name])
		}
	}
}
