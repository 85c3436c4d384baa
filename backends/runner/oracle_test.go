package runner_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/wlcdev/wlc/backends/goldentest"
	"github.com/wlcdev/wlc/backends/runner"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/results/ingest/ingesttest"
	"github.com/wlcdev/wlc/internal/testrig/stub"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// The deliberate differences between wlc's rows and perf-eval's, field by
// field. Every other field must be equal.
var (
	// perfAdded are the fields wlc sends on every perf row that perf-eval's
	// main line sends only from its multi-node branch (#30): the server's
	// shape and the per-GPU divisor, so a row says what it was divided by.
	perfAdded = []string{"dp", "num_nodes", "gpus_per_node", "gpu_count"}
	// evalChanged: source_file is the file's path in the job's checkout;
	// wlc's lm_eval writes under results/<w>/lm_eval/<task>/ instead of
	// results/<w>/<task>/, so the path differs by that segment.
	evalChanged = []string{"source_file"}
	// sglangChanged: perf-eval's SGLang branch wrote ep 1 and false flags
	// whatever the server ran; wlc's rows say what the workload types
	// (sglang.ep_size, enable_dp_attention, speculative_algorithm).
	sglangChanged = []string{"ep", "dp_attention", "spec_decoding"}
)

// TestPerfEvalOracle feeds the same raw results to perf-eval's own ingest
// scripts and to the job's ingest (lib.sh's wlc_ingest with the ingest
// tool, as the generated script runs it), both posting to one local
// ingest server, and compares the bodies field by field: 1-node TP8
// (main-line lib/ingest_perf.py), 2-node TP2×DP4 (slurm-pyxis's, with the
// multi-node fields), PD (pd-slurm's, --gpu-count --disagg) and an lm_eval
// task's results and samples (main-line lib/ingest.py).
func TestPerfEvalOracle(t *testing.T) {
	testenv.LookPath(t, "python3")
	testenv.LookPath(t, "curl")
	runtime := filepath.Join(testenv.SharedDir(t), "corpus", "perf-eval", "runtime")
	root := testenv.RepoRoot(t)
	w := func(archive, name string) plan.Workload {
		ws := goldentest.Open(t, filepath.Join(root, "testdata", "backends", archive), nil).Plans
		for _, w := range ws {
			if w.Name == name {
				return w
			}
		}
		t.Fatalf("%s has no workload %s", archive, name)
		return plan.Workload{}
	}

	for _, c := range []struct {
		name, branch string
		w            plan.Workload
		// args are the extra arguments perf-eval's run.sh passes on that
		// branch for this workload (what its parse_workload emits).
		args   []string
		noAuth bool // the branch predates the bearer token (#62)
		// changed are the fields wlc sends on purpose differently
		// (checked against the workload below).
		changed []string
	}{
		{name: "tp8", branch: "main", w: w("native/nvidia.txtar", "qwen3_5_b200")},
		// TP1 on 2 reserved GPUs, 1 idle on purpose (what `wlc import`
		// writes for a perf-eval workload holding GPUs it does not serve
		// on): perf-eval divided by TP × DP, so must wlc.
		{name: "idle_gpus", branch: "main", w: w("native/custom_steps.txtar", "custom_h100")},
		{name: "tp2xdp4_2node", branch: "slurm-pyxis", w: w("slurm/two_node.txtar", "two_node"), noAuth: true,
			args: []string{"--dp", "4", "--ep", "", "--gpu-count", "8", "--is-multinode", "true", "--num-nodes", "2",
				"--gpus-per-node", "4", "--dp-attention", "false", "--disagg", "false", "--spec-decoding", "false"}},
		{name: "pd", branch: "pd-slurm", w: w("slurm/pd_two_node.txtar", "pd_two_node"), noAuth: true,
			args: []string{"--gpu-count", "8", "--disagg", "--is-multinode"}},
		// perf-eval's SGLang branch: bench_serving's row, --framework sglang.
		{name: "sglang", branch: "sglang", w: w("native/sglang.txtar", "glm_5_2_sglang_b300"), noAuth: true,
			args: []string{"--framework", "sglang"}, changed: sglangChanged},
	} {
		t.Run(c.name, func(t *testing.T) {
			if len(c.w.Bench) == 0 {
				t.Fatalf("%s has no bench run", c.w.Name)
			}
			srv := ingesttest.New(t, "oracle-token")
			srv.NoAuth = c.noAuth
			dir := t.TempDir()
			r := c.w.Bench[0]
			res := filepath.Join(dir, "results", c.w.Name)
			os.MkdirAll(res, 0o755)
			raw := rawBenchResult(c.w.Model, r)
			if c.w.Engine == "sglang" {
				raw = rawSGLangResult(r)
			}
			writeJSON(t, filepath.Join(res, r.Result), raw)

			// perf-eval: run.sh's ingest_perf.py call, tp = TP × DP.
			s := c.w.Serve
			argv := append([]string{filepath.Join(runtime, c.branch, "lib", "ingest_perf.py"),
				"--raw-result", filepath.Join(res, r.Result), "--device", c.w.Ingest.Perf.Device,
				"--tp", fmt.Sprint(s.TensorParallelSize * s.DataParallelSize), "--precision", c.w.Ingest.Perf.Precision,
				"--model", c.w.Model, "--image", c.w.Image.Ref,
				"--isl", fmt.Sprint(r.InputLen), "--osl", fmt.Sprint(r.OutputLen), "--conc", fmt.Sprint(r.MaxConcurrency)}, c.args...)
			py(t, dir, srv, argv...)
			theirs := srv.Rows("perf")
			if len(theirs) != 1 {
				t.Fatalf("perf-eval sent %d perf rows, want 1 (refused: %q)", len(theirs), srv.Refused())
			}

			line, err := runner.PerfIngest(c.w, r)
			if err != nil {
				t.Fatal(err)
			}
			job(t, c.w, dir, srv, line)
			ours := srv.Rows("perf")
			if len(ours) != 2 {
				t.Fatalf("wlc sent %d perf rows, want 1 (refused: %q)", len(ours)-1, srv.Refused())
			}
			compare(t, theirs[0].Body, ours[1].Body, perfAdded, c.changed)
			if len(c.changed) > 0 {
				g := sglangOf(t, c.w)
				want := map[string]any{"ep": float64(g.ep), "dp_attention": fmt.Sprint(g.dpAttention), "spec_decoding": fmt.Sprint(g.spec)}
				for _, k := range c.changed {
					if ours[1].Body[k] != want[k] {
						t.Errorf("%s: wlc sent %v, the workload runs %v", k, ours[1].Body[k], want[k])
					}
				}
			}
			if got := ours[1].Header.Get("X-Source"); got != theirs[0].Header.Get("X-Source") {
				t.Errorf("X-Source %q, perf-eval sent %q", got, theirs[0].Header.Get("X-Source"))
			}
		})
	}

	t.Run("lm_eval", func(t *testing.T) {
		srv := ingesttest.New(t, "oracle-token")
		wl := w("native/nvidia.txtar", "qwen3_5_b200")
		if len(wl.LMEval) == 0 {
			t.Fatal("qwen3_5_b200 has no lm_eval task")
		}
		task := wl.LMEval[0]
		dir := t.TempDir()
		// The same lm_eval output in each layout: perf-eval's
		// results/<w>/<task>/ and wlc's results/<w>/lm_eval/<task>/.
		for _, d := range []string{filepath.Join("results", wl.Name, task.Task), filepath.Join("results", wl.Name, filepath.FromSlash(task.OutputDir))} {
			sub := filepath.Join(dir, d, "nvidia__Qwen3.5-397B-A17B-NVFP4")
			os.MkdirAll(sub, 0o755)
			writeJSON(t, filepath.Join(sub, "results_2026-12-01T10-00-00.000001.json"), map[string]any{
				"results": map[string]any{task.Task: map[string]any{"alias": task.Task, "exact_match,strict-match": 0.91}},
				"config":  map[string]any{"model": "local-completions"}, "n-shot": map[string]any{task.Task: 5}})
			var lines []string
			for i := range 5 {
				b, _ := json.Marshal(map[string]any{"doc_id": i, "target": fmt.Sprint(i), "exact_match": 1.0, "doc": map[string]any{"question": strings.Repeat("x", i)}})
				lines = append(lines, string(b))
			}
			os.WriteFile(filepath.Join(sub, "samples_"+task.Task+"_2026-12-01T10-00-00.000001.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
		}
		env := []string{"BUILDKITE_BUILD_NUMBER=77", "BUILDKITE_BRANCH=main", "NIGHTLY=1",
			"WORKLOAD_IMAGE=" + wl.Image.Ref, "WORKLOAD_VLLM_COMMIT=" + wl.Image.Commit}
		py(t, dir, srv, append([]string{filepath.Join(runtime, "main", "lib", "ingest.py"),
			"--results-dir", filepath.Join("results", wl.Name, task.Task), "--workload", wl.Name, "--task", task.Task}, env...)...)
		theirs := srv.Rows("eval")
		if len(theirs) != 2 {
			t.Fatalf("perf-eval sent %d eval rows, want results and one samples batch (refused: %q)", len(theirs), srv.Refused())
		}
		line, err := runner.EvalIngest(wl, task)
		if err != nil {
			t.Fatal(err)
		}
		job(t, wl, dir, srv, line, env...)
		ours := srv.Rows("eval")[2:]
		if len(ours) != 2 {
			t.Fatalf("wlc sent %d eval rows, want 2 (refused: %q)", len(ours), srv.Refused())
		}
		for i := range ours {
			compare(t, theirs[i].Body, ours[i].Body, nil, evalChanged)
			want := strings.Replace(theirs[i].Body["source_file"].(string), "/"+task.Task+"/", "/"+task.OutputDir+"/", 1)
			if ours[i].Body["source_file"] != want {
				t.Errorf("source_file %v, want %s", ours[i].Body["source_file"], want)
			}
		}
	})
}

type sglangFacts struct {
	ep                int
	dpAttention, spec bool
}

// sglangOf reads what an SGLang workload's server runs from its argv.
func sglangOf(t *testing.T, w plan.Workload) sglangFacts {
	f := sglangFacts{ep: 1}
	a := w.Serve.Args
	for i, tok := range a {
		switch tok {
		case "--ep-size":
			fmt.Sscan(a[i+1], &f.ep)
		case "--enable-dp-attention":
			f.dpAttention = true
		case "--speculative-algorithm":
			f.spec = true
		}
	}
	if f.ep == 1 || !f.dpAttention || !f.spec {
		t.Fatalf("%s runs ep %d, dp attention %v, speculative decoding %v: the oracle wants a workload with all three (argv %q)", w.Name, f.ep, f.dpAttention, f.spec, a)
	}
	return f
}

// TestPerfEvalOracleBFCL: a BFCL group's scores (the group and its leaf
// categories) written by perf-eval's run_bfcl.py (its write_results) and
// by wlc's BFCL driver (its lm_eval_results and score list), each ingested
// the way its job does it (perf-eval's run.sh: ingest.py --no-samples per
// manifest entry; wlc: wlc_ingest … bfcl), reach the eval dashboard as the
// same rows, field by field.
func TestPerfEvalOracleBFCL(t *testing.T) {
	testenv.LookPath(t, "python3")
	testenv.LookPath(t, "curl")
	lib := filepath.Join(testenv.SharedDir(t), "corpus", "perf-eval", "runtime", "main", "lib")
	root := testenv.RepoRoot(t)
	ws := goldentest.Open(t, filepath.Join(root, "testdata", "backends", "native", "rocm.txtar"), nil).Plans
	var wl plan.Workload
	var run plan.BFCLRun
	for _, w := range ws {
		for _, r := range w.BFCL {
			if r.Category == "multi_turn" {
				wl, run = w, r
			}
		}
	}
	if run.Category == "" {
		t.Fatal("native/rocm.txtar has no workload with the BFCL group multi_turn")
	}
	scores := `{"multi_turn": 0.625, "multi_turn_base": 0.75, "multi_turn_miss_func": 0.5}`
	dir := t.TempDir()
	res := filepath.Join(dir, "results", wl.Name)
	if err := os.MkdirAll(res, 0o755); err != nil {
		t.Fatal(err)
	}
	// Each side's own writer: perf-eval's write_results (bfcl-<cat>/ and a
	// manifest), wlc's lm_eval_results (lm_eval/bfcl_<cat>/) and score list.
	writer := `
import importlib.util, json, sys
from pathlib import Path
def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m
lib, ours, res, model, scores = sys.argv[1], sys.argv[2], Path(sys.argv[3]), sys.argv[4], json.loads(sys.argv[5])
sys.path.insert(0, lib)
theirs = load("run_bfcl", lib + "/run_bfcl.py")
cats = theirs.write_results(res, model, {c: {"accuracy": a} for c, a in scores.items()}, "2026-12-01T10-00-00", "multi_turn")
theirs.write_ingest_manifest(res, "multi_turn", cats)
wlc = load("wlc_bfcl", ours)
tasks = []
for c, a in scores.items():
    task = "bfcl_" + c
    alias = task + " (overall)" if c == "multi_turn" else task
    d = res / "lm_eval" / task
    d.mkdir(parents=True)
    (d / "results_2026-12-01T10-00-00.json").write_text(json.dumps(wlc.lm_eval_results(model, task, a, alias), indent=2))
    tasks.append(task)
(res / "bfcl" / "multi_turn").mkdir(parents=True)
(res / "bfcl" / "multi_turn" / "lm_eval_tasks.txt").write_text("".join(t + "\n" for t in tasks))
`
	// perf-eval's writer asks bfcl_eval which categories a group holds:
	// the BFCL stand-in answers from the stub bfcl's category table.
	stubs := stub.Build(t, t.TempDir())
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, "-c", writer, lib, filepath.Join(root, "backends", "runner", "bfcl.py"), res, wl.Model, scores)
	cmd.Env = append(os.Environ(), "PATH="+stubs+string(filepath.ListSeparator)+os.Getenv("PATH"),
		"PYTHONPATH="+stub.Python(stubs, t.TempDir(), "bfcl-eval"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("writing the BFCL scores: %v\n%s", err, out)
	}

	srv := ingesttest.New(t, "oracle-token")
	var manifest []byte
	env := []string{"BUILDKITE_BUILD_NUMBER=78", "NIGHTLY=1",
		"WORKLOAD_IMAGE=" + wl.Image.Ref, "WORKLOAD_VLLM_COMMIT=" + wl.Image.Commit}
	manifest, err = os.ReadFile(filepath.Join(res, ".bfcl_ingest", "multi_turn.txt"))
	if err != nil {
		t.Fatal(err)
	}
	cats := strings.Fields(string(manifest))
	if len(cats) != 3 {
		t.Fatalf("perf-eval's manifest lists %q, want the group and 2 leaves", cats)
	}
	for _, c := range cats {
		py(t, dir, srv, append([]string{filepath.Join(lib, "ingest.py"), "--results-dir", filepath.Join("results", wl.Name, "bfcl-"+c),
			"--workload", wl.Name, "--task", "bfcl_" + c, "--no-samples"}, env...)...)
	}
	theirs := srv.Rows("eval")
	if len(theirs) != 3 {
		t.Fatalf("perf-eval sent %d eval rows, want 3 (refused: %q)", len(theirs), srv.Refused())
	}
	line, err := runner.BFCLIngest(wl, run)
	if err != nil {
		t.Fatal(err)
	}
	job(t, wl, dir, srv, line, append(env, "INGEST_NO_SAMPLES=")...)
	ours := srv.Rows("eval")[3:]
	if len(ours) != 3 {
		t.Fatalf("wlc sent %d eval rows, want 3 (refused: %q)", len(ours), srv.Refused())
	}
	byTask := map[string]map[string]any{}
	for _, r := range theirs {
		byTask[fmt.Sprint(r.Body["task"])] = r.Body
	}
	for _, r := range ours {
		task := fmt.Sprint(r.Body["task"])
		th, ok := byTask[task]
		if !ok {
			t.Errorf("wlc sent a row for %s, perf-eval did not", task)
			continue
		}
		compare(t, th, r.Body, nil, evalChanged)
		want := strings.Replace(th["source_file"].(string), "/bfcl-"+strings.TrimPrefix(task, "bfcl_")+"/", "/lm_eval/"+task+"/", 1)
		if r.Body["source_file"] != want {
			t.Errorf("%s: source_file %v, want %s", task, r.Body["source_file"], want)
		}
	}
}

// py runs a perf-eval script (args, then NAME=VALUE environment entries)
// against srv from dir.
func py(t *testing.T, dir string, srv *ingesttest.Server, args ...string) {
	t.Helper()
	var argv, env []string
	for _, a := range args {
		if k, _, ok := strings.Cut(a, "="); ok && k == strings.ToUpper(k) && !strings.HasPrefix(a, "-") && !strings.Contains(k, "/") {
			env = append(env, a)
		} else {
			argv = append(argv, a)
		}
	}
	cmd := exec.Command("python3", argv...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), srv.Env()...), env...)
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "failed") {
		t.Fatalf("perf-eval's %s: %v\n%s", filepath.Base(argv[0]), err, out)
	}
}

// job runs lines (wlc_ingest calls) with the job script's library and
// ingest part, as the generated script would after a step passed.
func job(t *testing.T, w plan.Workload, dir string, srv *ingesttest.Server, lines string, env ...string) {
	t.Helper()
	ing, err := runner.Ingest(w)
	if err != nil {
		t.Fatal(err)
	}
	script := "set -euo pipefail\n" + runner.Library(w) + ing +
		"wlc_in_server() { \"$@\"; }\nWLC_RESULTS_DIR=$PWD/" + w.ResultsPath + "\nWLC_BENCH_DIR=$WLC_RESULTS_DIR\n" + lines
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), srv.Env()...), env...)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ingest: sent") {
		t.Fatalf("wlc_ingest: %v\n%s", err, out)
	}
}

// compare asserts ours equals theirs field by field, except the fields
// wlc adds and the ones it deliberately changes; date is the time of
// sending, compared by format and closeness.
func compare(t *testing.T, theirs, ours map[string]any, added, changed []string) {
	t.Helper()
	skip := map[string]bool{"date": true}
	for _, k := range changed {
		skip[k] = true
	}
	for _, k := range added {
		// Added where perf-eval's branch lacks it; compared where it has it.
		_, theirsToo := theirs[k]
		skip[k] = !theirsToo
	}
	for _, k := range added {
		if _, ok := ours[k]; !ok {
			t.Errorf("wlc's row lacks %s", k)
		}
	}
	var keys []string
	for k := range theirs {
		keys = append(keys, k)
	}
	for k := range ours {
		if _, ok := theirs[k]; !ok && !skip[k] {
			t.Errorf("wlc sends %s = %v, perf-eval does not", k, ours[k])
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if skip[k] {
			continue
		}
		a, b := theirs[k], ours[k]
		fa, okA := a.(float64)
		fb, okB := b.(float64)
		if okA && okB && math.Abs(fa-fb) <= 1e-12*math.Max(1, math.Abs(fa)) {
			continue
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: perf-eval %v, wlc %v", k, a, b)
		}
	}
	if d, ok := theirs["date"].(string); ok {
		td, err1 := time.Parse(time.DateTime, d)
		od, err2 := time.Parse(time.DateTime, fmt.Sprint(ours["date"]))
		if err1 != nil || err2 != nil || od.Sub(td).Abs() > 10*time.Minute {
			t.Errorf("date: perf-eval %v, wlc %v", theirs["date"], ours["date"])
		}
	}
}

// rawBenchResult is a `vllm bench serve --save-result` file of run r, with
// the fields vLLM writes (percentiles 99 of ttft, tpot, itl, e2el).
// rawSGLangResult is the row sglang.bench_serving appends to its
// --output-file (bench_serving.py's result dict), for run r.
func rawSGLangResult(r plan.BenchRun) map[string]any {
	n, dur := r.NumPrompts, 42.5
	out := map[string]any{
		"backend": "sglang", "dataset_name": "random", "request_rate": "inf", "max_concurrency": r.MaxConcurrency,
		"sharegpt_output_len": nil, "random_input_len": r.InputLen, "random_output_len": r.OutputLen, "random_range_ratio": 1.0,
		"duration": dur, "completed": n, "total_input_tokens": n * r.InputLen, "total_output_tokens": n * r.OutputLen,
		"total_output_tokens_retokenized": n * r.OutputLen, "request_throughput": float64(n) / dur,
		"input_throughput": float64(n*r.InputLen) / dur, "output_throughput": float64(n*r.OutputLen) / dur,
		"output_throughput_retokenized": float64(n*r.OutputLen) / dur,
		"total_throughput":              float64(n*(r.InputLen+r.OutputLen)) / dur,
		"total_throughput_retokenized":  float64(n*(r.InputLen+r.OutputLen)) / dur,
		"concurrency":                   float64(r.MaxConcurrency) * 0.97, "accept_length": nil,
	}
	for i, m := range []string{"e2e_latency", "ttft", "tpot", "itl"} {
		base := float64(10*(i+1)) + 0.25
		out["mean_"+m+"_ms"] = base
		out["median_"+m+"_ms"] = base * 0.9
		out["std_"+m+"_ms"] = base / 7
		out["p99_"+m+"_ms"] = base * 3
	}
	out["p95_itl_ms"] = 12.5
	return out
}

func rawBenchResult(model string, r plan.BenchRun) map[string]any {
	n := r.NumPrompts
	dur := 61.25
	out := map[string]any{
		"date": "20261201-100000", "endpoint_type": "vllm", "backend": "vllm", "label": nil,
		"model_id": model, "tokenizer_id": model, "num_prompts": n, "request_rate": "inf", "burstiness": 1.0,
		"max_concurrency": r.MaxConcurrency, "duration": dur, "completed": n, "failed": 0,
		"total_input_tokens": n * r.InputLen, "total_output_tokens": n * r.OutputLen,
		"request_throughput": float64(n) / dur, "request_goodput": nil,
		"output_throughput": float64(n*r.OutputLen) / dur, "total_token_throughput": float64(n*(r.InputLen+r.OutputLen)) / dur,
		"max_output_tokens_per_s": 9123.0, "max_concurrent_requests": r.MaxConcurrency,
		"input_lens": []int{r.InputLen}, "output_lens": []int{r.OutputLen}, "ttfts": []float64{0.5}, "itls": [][]float64{{0.01}},
		"generated_texts": []string{"x"}, "errors": []string{""},
	}
	for i, m := range []string{"ttft", "tpot", "itl", "e2el"} {
		base := float64(10*(i+1)) + 0.125
		out["mean_"+m+"_ms"] = base
		out["median_"+m+"_ms"] = base * 0.9
		out["std_"+m+"_ms"] = base / 7
		out["p99_"+m+"_ms"] = base * 3
	}
	return out
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
