package native_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wlcdev/wlc/backends/native"
	"github.com/wlcdev/wlc/backends/runner/runnertest"
	"github.com/wlcdev/wlc/internal/results/ingest/ingesttest"
)

// TestUntrueResults: against a server that returns empty completions,
// fails some requests, or refuses BFCL's tool calls, the job fails with
// status 65 (invalid results) and one line naming the run and why; the
// failing steps send nothing to the dashboards and their raw files stay.
func TestUntrueResults(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		fault string
		// line is in the job's output; failed are labels of failed steps.
		line   string
		failed []string
		// perf and bfcl: whether the dashboards get those rows.
		perf, bfcl bool
	}{
		{fault: "empty", line: "requests completed with 0 output tokens (empty completions)",
			failed: []string{"bench 128-in-16-out-conc-1", "bench chat-conc-2"}, bfcl: true},
		{fault: "fail-some", line: "prompts completed, ", failed: []string{"bench 128-in-16-out-conc-1"}, bfcl: true},
		{fault: "error", line: "simple_python: every one of the 2 requests failed, so its score would be 0%; the first: Error during inference: Error code: 400",
			failed: []string{"bfcl simple_python"}, perf: true},
	} {
		t.Run(c.fault, func(t *testing.T) {
			t.Parallel()
			w := workload(t, "sweep.txtar")
			srv := ingesttest.New(t, "tok-faults")
			j := runnertest.NewJob(t, native.Backend{}, w, append(srv.Env(), "WLC_STUB_FAULT="+c.fault)...)
			res := j.Run(t, jobTimeout)
			if res.Code != 65 {
				t.Fatalf("exit %d, want 65 (invalid results):\n%s", res.Code, res.Output)
			}
			wantOutput(t, res, c.line)
			for _, f := range c.failed {
				wantOutput(t, res, "FAILED "+f+" (exit 65)")
			}
			if got := len(srv.Rows("perf")); (got > 0) != c.perf {
				t.Errorf("%d perf rows sent; want some: %v", got, c.perf)
			}
			bfclRows := 0
			for _, r := range srv.Rows("eval") {
				if strings.HasPrefix(r.Body["task"].(string), "bfcl_") {
					bfclRows++
				}
			}
			if (bfclRows > 0) != c.bfcl {
				t.Errorf("%d BFCL rows sent; want some: %v", bfclRows, c.bfcl)
			}
			// The raw results stay for a look.
			raw := filepath.Join(j.Results(), "bfcl", "simple_python", "result")
			if !c.perf {
				raw = filepath.Join(j.Results(), w.Bench[0].RunFiles[0])
			}
			if _, err := os.Stat(raw); err != nil {
				t.Errorf("raw results gone: %v", err)
			}
			j.NoProcessLeft(t)
		})
	}
}

// TestAllowFailedRequests: a run whose config allows failed requests
// passes with some failed, says why, and is ingested.
func TestAllowFailedRequests(t *testing.T) {
	t.Parallel()
	w := workload(t, "sweep.txtar")
	w.Bench = w.Bench[len(w.Bench)-1:] // chat-conc-2: 4 prompts, every third fails
	w.LMEval, w.BFCL, w.Tools = nil, nil, nil
	w.Bench[0].AllowFailedRequests = "the stub fails every third request"
	srv := ingesttest.New(t, "tok-allow")
	j := runnertest.NewJob(t, native.Backend{}, w, append(srv.Env(), "WLC_STUB_FAULT=fail-some")...)
	res := j.Run(t, jobTimeout)
	if res.Code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", res.Code, res.Output)
	}
	wantOutput(t, res, "3 of 4 prompts completed, 1 failed, accepted: allow_failed_requests (the stub fails every third request)")
	if got := len(srv.Rows("perf")); got != 1 {
		t.Errorf("%d perf rows, want 1", got)
	}
}

// TestBFCLAsItBehaves: BFCL memory_kv with max_test_cases 2 runs two
// questions and the prerequisite conversations they depend on (not just
// the prerequisites, which sort first), and a model id with "_" is scored
// (BFCL's evaluate turns the result directory's "_" back into "/"):
// against the stub bfcl, which selects, orders and names as BFCL does.
func TestBFCLAsItBehaves(t *testing.T) {
	t.Parallel()
	w := workload(t, "bfcl_memory.txtar")
	srv := ingesttest.New(t, "tok-bfcl")
	j := runnertest.NewJob(t, native.Backend{}, w, srv.Env()...)
	res := j.Run(t, jobTimeout)
	if res.Code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", res.Code, res.Output)
	}
	wantOutput(t, res, "2 cases of memory_kv (and the 2 prerequisite conversations they need)", "done bfcl memory_kv", "done bfcl simple_python")
	j.CheckEvalResults(t)
	j.CheckIngest(t, srv, false)
	// Each generate ran the questions asked for, the memory ones after
	// their prerequisites.
	var got []string
	for _, r := range runnertest.Find(j.Records(t), "bfcl", "generate") {
		got = append(got, r.Flags["categories"]+"="+r.Flags["cases"])
	}
	if want := []string{"memory_kv_prereq,memory_kv=4", "simple_python=2"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("generate ran %q, want %q", got, want)
	}
	// Both questions were answered, not failed for want of their memory.
	data, err := os.ReadFile(filepath.Join(j.Results(), "bfcl", "memory_kv", "result", "acme_tool_caller-8B", "BFCL_v4_memory_kv_result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n != 2 || strings.Contains(string(data), "Error during inference") {
		t.Errorf("memory_kv results (%d lines), want 2 answered:\n%s", n, data)
	}
}
