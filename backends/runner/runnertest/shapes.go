package runnertest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/backends/goldentest"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/results/ingest/ingesttest"
)

// CheckSweep runs a backend-sweep workload whose server refuses the
// backend refused (the stub vllm's WLC_STUB_REFUSE_BACKENDS) and checks
// what a user relies on: one server per backend, one after another, with
// that backend's flag; every other backend's results in its own
// directory; the refused one recorded with vLLM's error while the next
// still runs; sweep.tsv and the job's status naming the failure; nothing
// left running.
func CheckSweep(t *testing.T, b backends.Backend, w plan.Workload, refused string, extra ...string) {
	t.Helper()
	if w.Sweep == nil {
		t.Fatalf("%s has no backend sweep", w.Name)
	}
	srv := ingesttest.New(t, "tok-sweep")
	j := NewJob(t, b, w, append(append([]string{"WLC_STUB_REFUSE_BACKENDS=" + refused}, srv.Env()...), extra...)...)
	res := j.Run(t, 360*time.Second)
	if res.Code == 0 {
		t.Fatalf("exit 0 although backend %s did not start:\n%s", refused, res.Output)
	}
	serves := Find(j.Records(t), "vllm", "serve")
	if len(serves) != len(w.Sweep.Runs) {
		t.Fatalf("%d servers started, want one per backend (%d):\n%s", len(serves), len(w.Sweep.Runs), res.Output)
	}
	ran := 0
	for i, r := range w.Sweep.Runs {
		got := serves[i].Flags[strings.TrimPrefix(w.Sweep.Flag, "--")]
		want := r.Backend
		if r.Backend == "default" {
			want = ""
		}
		if got != want {
			t.Errorf("server %d: %s %q, want %q (backend %s)", i, w.Sweep.Flag, got, want, r.Backend)
		}
		if i > 0 && serves[i].Time.Before(serves[i-1].Time) {
			t.Errorf("server %d started before server %d", i, i-1)
		}
		dir := filepath.Join(j.Results(), r.Dir)
		if r.Backend == refused {
			msg, err := os.ReadFile(filepath.Join(dir, "error.txt"))
			if err != nil || !strings.Contains(string(msg), "ValueError") || !strings.Contains(string(msg), refused) {
				t.Errorf("%s/error.txt = %q (%v), want vLLM's ValueError naming %s", r.Dir, msg, err, refused)
			}
			if fs, _ := filepath.Glob(filepath.Join(dir, "bench-*.json")); len(fs) > 0 {
				t.Errorf("%s has bench results although its server never started: %v", r.Dir, fs)
			}
			continue
		}
		for _, br := range w.Bench {
			if _, err := os.Stat(filepath.Join(dir, br.Result)); err != nil {
				t.Errorf("backend %s: %v", r.Backend, err)
			}
		}
		for _, l := range w.LMEval {
			// lm-eval writes <output_path>/<model>/results_<time>.json.
			if fs, _ := filepath.Glob(filepath.Join(dir, "lm_eval", l.Task, "*", "results_*.json")); len(fs) != 1 {
				t.Errorf("backend %s: %d lm_eval results files for %s", r.Backend, len(fs), l.Task)
			}
		}
		// Each backend's dashboard rows are kept in its own folder, and
		// an eval row's source_file names that folder (as perf-eval's).
		if fs, _ := filepath.Glob(filepath.Join(dir, "ingest", "perf", "*.json")); len(fs) != len(w.Bench) {
			t.Errorf("backend %s: %d perf rows kept in %s/ingest/perf, want %d", r.Backend, len(fs), r.Dir, len(w.Bench))
		}
		ran++
	}
	if got, want := len(srv.Rows("perf")), ran*len(w.Bench); got != want {
		t.Errorf("the dashboard got %d perf rows, want %d (%d bench runs × %d backends that started)", got, want, len(w.Bench), ran)
	}
	if r := srv.Refused(); len(r) > 0 {
		t.Errorf("the ingest server refused: %q", r)
	}
	for _, row := range srv.Rows("eval") {
		src, _ := row.Body["source_file"].(string)
		in := false
		for _, r := range w.Sweep.Runs {
			in = in || strings.HasPrefix(src, w.ResultsPath+"/"+r.Dir+"/")
		}
		if !in {
			t.Errorf("eval row source_file %q is in no backend's folder", src)
		}
	}
	for _, r := range w.Sweep.Runs {
		if r.Backend == refused {
			continue
		}
		dir := filepath.Join(j.Results(), r.Dir)
		if data, err := os.ReadFile(filepath.Join(dir, w.Sweep.Kind+"_backend.txt")); err != nil || (r.Backend != "default" && strings.TrimSpace(string(data)) != r.Backend) {
			t.Errorf("%s/%s_backend.txt = %q (%v)", r.Dir, w.Sweep.Kind, data, err)
		}
	}
	tsv, err := os.ReadFile(filepath.Join(j.Results(), "sweep.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(tsv)), "\n")
	if len(lines) != len(w.Sweep.Runs)+1 {
		t.Fatalf("sweep.tsv has %d lines, want a header and one per backend:\n%s", len(lines), tsv)
	}
	for i, r := range w.Sweep.Runs {
		want := r.Backend + "\tok"
		if r.Backend == refused {
			want = r.Backend + "\tserver not ready (status 1): ValueError"
		}
		if !strings.HasPrefix(lines[i+1], want) {
			t.Errorf("sweep.tsv line %d = %q, want it to start with %q", i+1, lines[i+1], want)
		}
	}
	failed := "failed: " + w.Sweep.Runs[0].Dir[:strings.Index(w.Sweep.Runs[0].Dir, "-")+1] + refused + "(server not ready)"
	if !strings.Contains(res.Output, failed) {
		t.Errorf("the job's summary lacks %q:\n%s", failed, res.Output)
	}
	j.NoProcessLeft(t)
}

// CheckCustom runs a workload with custom steps and checks each ran
// against the live server with its environment, its results kept in
// custom-<name>/.
func CheckCustom(t *testing.T, b backends.Backend, w plan.Workload, files map[string]string) {
	t.Helper()
	j := NewJob(t, b, w)
	res := j.Run(t, 360*time.Second)
	if res.Code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", res.Code, res.Output)
	}
	for _, c := range w.Custom {
		if !strings.Contains(res.Output, "done custom "+c.Name) {
			t.Errorf("output lacks done custom %s:\n%s", c.Name, res.Output)
		}
	}
	for f, want := range files {
		data, err := os.ReadFile(filepath.Join(j.Results(), f))
		if err != nil {
			t.Errorf("custom step result: %v", err)
			continue
		}
		if !strings.Contains(string(data), want) {
			t.Errorf("%s = %q, want it to contain %q", f, data, want)
		}
	}
	j.NoProcessLeft(t)
}

// CheckJobs loads archive's two custom-job workloads and checks each with
// CheckJob: the one with the GPUs succeeding and failing (status 3), the
// one on the host succeeding.
func CheckJobs(t *testing.T, b backends.Backend, archive string) {
	t.Helper()
	ws := goldentest.Open(t, archive, nil).Plans
	if len(ws) != 2 {
		t.Fatalf("%s: %d workloads, want 2", archive, len(ws))
	}
	for _, w := range ws {
		CheckJob(t, b, w, 0)
		if w.Job != nil && w.Job.Where != "host" {
			CheckJob(t, b, w, 3)
		}
	}
}

// CheckJob runs a workload with a custom_job and checks what a user relies
// on: no server starts, the job's program runs once with its arguments and
// env verbatim (given a manual/ablation.sh in the job's directory when it
// runs one), its results directory is kept, its exit status is the job's
// (WLC_STUB_JOB_EXIT), and nothing is left running.
func CheckJob(t *testing.T, b backends.Backend, w plan.Workload, exit int) Result {
	t.Helper()
	if w.Job == nil {
		t.Fatalf("%s has no custom job", w.Name)
	}
	j := NewJob(t, b, w, fmt.Sprintf("WLC_STUB_JOB_EXIT=%d", exit))
	script := "#!/usr/bin/env bash\n" +
		"printf '%s\\n' \"$@\" \"group $CUSTOM_GROUP\" \"model $WLC_MODEL\" >\"$WLC_STEP_DIR/args.txt\"\n" +
		"exit \"${WLC_STUB_JOB_EXIT:-0}\"\n"
	if err := os.MkdirAll(filepath.Join(j.Dir, "manual"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(j.Dir, "manual", "ablation.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	res := j.Run(t, 120*time.Second)
	if res.Code != exit {
		t.Fatalf("exit %d, want the job's %d:\n%s", res.Code, exit, res.Output)
	}
	if s := Find(j.Records(t), "vllm", "serve"); len(s) > 0 {
		t.Errorf("a custom job started %d server(s)", len(s))
	}
	dir := filepath.Join(j.Results(), w.Job.Dir)
	if w.Job.Where == "host" {
		for _, f := range []string{"kernel.txt", "model.txt"} {
			if data, err := os.ReadFile(filepath.Join(dir, f)); err != nil || len(data) == 0 {
				t.Errorf("%s/%s: %q, %v\n%s", w.Job.Dir, f, data, err, res.Output)
			}
		}
	} else {
		got, err := os.ReadFile(filepath.Join(dir, "args.txt"))
		want := "--arm\nit's $(not) expanded\ngroup current\nmodel " + w.Model + "\n"
		if err != nil || string(got) != want {
			t.Errorf("%s/args.txt = %q (%v), want %q\n%s", w.Job.Dir, got, err, want, res.Output)
		}
	}
	if exit != 0 && !strings.Contains(res.Output, "custom job") {
		t.Errorf("the output does not name the failed custom job:\n%s", res.Output)
	}
	j.NoProcessLeft(t)
	return res
}
