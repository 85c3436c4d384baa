package runnertest

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/results/dashboard"
	"github.com/wlcdev/wlc/internal/results/ingest/ingesttest"
)

// CheckIngest asserts the dashboards received exactly the job's rows: one
// perf row per bench run, computed from its result file (throughput per
// GPU divided by every GPU the server uses, latencies in seconds), and per
// lm_eval task its results file and (unless noSamples) its samples; that
// each row carries the job's WLC_JOB_HASH (none without); and that each
// row is also kept under results/<name>/ingest/.
func (j *Job) CheckIngest(t testing.TB, srv *ingesttest.Server, noSamples bool) {
	t.Helper()
	if r := srv.Refused(); len(r) > 0 {
		t.Errorf("the ingest server refused: %q", r)
	}
	perf := srv.Rows("perf")
	if len(perf) != len(j.W.Bench) {
		t.Fatalf("%d perf rows, want one per bench run (%d)", len(perf), len(j.W.Bench))
	}
	gpus := float64(plan.ServingGPUs(j.W))
	for i, b := range j.W.Bench {
		row, raw := perf[i].Body, readJSON(t, filepath.Join(j.Results(), b.Result))
		if got := perf[i].Header.Get("X-Source"); got != dashboard.PerfSource {
			t.Errorf("perf row %s: X-Source %q", b.Name, got)
		}
		total, ok := raw["total_token_throughput"].(float64)
		if !ok { // sglang.bench_serving
			total, _ = raw["total_throughput"].(float64)
		}
		output, _ := raw["output_throughput"].(float64)
		input, ok := raw["input_throughput"].(float64)
		if !ok {
			input = total - output
		}
		want := map[string]any{
			"device": j.W.Ingest.Perf.Device, "image": j.W.Image.Ref, "model": j.W.Model, "framework": j.W.Engine,
			"precision": j.W.Ingest.Perf.Precision, "conc": float64(b.MaxConcurrency),
			"isl": float64(b.InputLen), "osl": float64(b.OutputLen), "gpu_count": gpus,
			"num_nodes": float64(j.W.Nodes), "gpus_per_node": float64(j.W.GPUsPerNode),
			"is_multinode": map[bool]string{true: "true", false: "false"}[j.W.Nodes > 1],
			"tp":           float64(j.W.Serve.TensorParallelSize * j.W.Serve.DataParallelSize),
			"tput_per_gpu": total / gpus, "output_tput_per_gpu": output / gpus, "input_tput_per_gpu": input / gpus,
			"mean_ttft": raw["mean_ttft_ms"].(float64) / 1000, "p99_tpot": raw["p99_tpot_ms"].(float64) / 1000,
		}
		for k, v := range want {
			if f, ok := v.(float64); ok {
				if g, ok := row[k].(float64); !ok || math.Abs(g-f) > 1e-9*math.Max(1, math.Abs(f)) {
					t.Errorf("perf row %s: %s = %v, want %v", b.Name, k, row[k], f)
				}
			} else if row[k] != v {
				t.Errorf("perf row %s: %s = %v, want %v", b.Name, k, row[k], v)
			}
		}
	}
	var evals []ingesttest.Row
	for _, r := range srv.Rows("eval") {
		evals = append(evals, r)
	}
	want := 0
	for _, l := range j.W.LMEval {
		files, _ := filepath.Glob(filepath.Join(j.Results(), filepath.FromSlash(l.OutputDir), "*", "results_*.json"))
		samples, _ := filepath.Glob(filepath.Join(j.Results(), filepath.FromSlash(l.OutputDir), "*", "samples_*.jsonl"))
		seen := 0
		for _, r := range evals {
			if r.Body["task"] != l.Task || r.Body["workload"] != j.W.Ingest.Workload {
				continue
			}
			seen++
			switch r.Body["kind"] {
			case "results":
				if len(files) != 1 || !reflect.DeepEqual(r.Body["data"], readJSON(t, files[0])) {
					t.Errorf("eval results row of %s: data differs from %v", l.Task, files)
				}
			case "samples":
				if noSamples {
					t.Errorf("eval samples row of %s sent with %s set", l.Task, dashboard.NoSamplesEnv)
				}
			}
		}
		n := len(files)
		if !noSamples {
			n += len(samples)
		}
		if seen != n {
			t.Errorf("lm_eval %s: %d eval rows, want %d", l.Task, seen, n)
		}
		want += n
	}
	// BFCL: one results row per score its driver listed (the category,
	// and for a group each leaf), the data as written, no samples.
	for _, b := range j.W.BFCL {
		list, err := os.ReadFile(filepath.Join(j.Results(), "bfcl", b.Category, "lm_eval_tasks.txt"))
		if err != nil {
			t.Errorf("bfcl %s: no score list: %v", b.Category, err)
			continue
		}
		tasks := strings.Fields(string(list))
		if !slices.Contains(tasks, "bfcl_"+b.Category) {
			t.Errorf("bfcl %s: score list %q lacks bfcl_%s", b.Category, tasks, b.Category)
		}
		for _, task := range tasks {
			files, _ := filepath.Glob(filepath.Join(j.Results(), "lm_eval", task, "results_*.json"))
			seen := 0
			for _, r := range evals {
				if r.Body["task"] != task || r.Body["workload"] != j.W.Ingest.Workload {
					continue
				}
				seen++
				if r.Body["kind"] != "results" || len(files) != 1 || !reflect.DeepEqual(r.Body["data"], readJSON(t, files[0])) {
					t.Errorf("bfcl row of %s: kind %v, data differs from %v", task, r.Body["kind"], files)
				}
			}
			if seen != 1 {
				t.Errorf("bfcl %s: %d eval rows, want 1", task, seen)
			}
			want++
		}
	}
	if len(evals) != want {
		t.Errorf("%d eval rows, want %d", len(evals), want)
	}
	// Each row traces back to the job that measured it (its
	// provenance.json) by the job hash the job ran with.
	hash := j.JobHash(t)
	for _, r := range append(append([]ingesttest.Row{}, perf...), evals...) {
		if got, _ := r.Body["job_hash"].(string); got != hash {
			t.Errorf("%s row %v: job_hash %q, want %q", r.Endpoint, r.Body["task"], got, hash)
		}
	}
	// The token travels on curl's stdin: it is in no file of the job.
	filepath.WalkDir(j.Dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if data, err := os.ReadFile(p); err == nil && strings.Contains(string(data), srv.Token) {
				t.Errorf("the ingest token is written in %s", p)
			}
		}
		return nil
	})
	var kept []string
	filepath.WalkDir(filepath.Join(j.Results(), dashboard.Dir), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			kept = append(kept, p)
		}
		return nil
	})
	sort.Strings(kept)
	if len(kept) != len(perf)+len(evals) {
		t.Errorf("results/%s/%s keeps %d files, want one per row sent (%d): %q", j.W.Name, dashboard.Dir, len(kept), len(perf)+len(evals), kept)
	}
}

// CheckTagged asserts the tags a job run under NIGHTLY=1 and
// BUILDKITE_BUILD_NUMBER=build puts on its rows: every perf row nightly,
// every eval row nightly with the build number.
func (j *Job) CheckTagged(t testing.TB, srv *ingesttest.Server, build string) {
	t.Helper()
	for _, r := range srv.Rows("perf") {
		if r.Body["nightly"] != true {
			t.Errorf("perf row without nightly: true under NIGHTLY=1: %s", r.Raw)
		}
	}
	for _, r := range srv.Rows("eval") {
		if r.Body["buildkite_build_number"] != build || r.Body["nightly"] != true {
			t.Errorf("eval row without the build number %s and nightly tag: %.300s", build, r.Raw)
		}
	}
}

func readJSON(t testing.TB, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}
