package native_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wlcdev/wlc/backends/native"
	"github.com/wlcdev/wlc/backends/runner/runnertest"
	"github.com/wlcdev/wlc/internal/results/ingest/ingesttest"
)

// TestIngestBadInput: each problem with the dashboards or a result is one
// clear line, the results stay on disk, and the exit status follows
// perf-eval's rule: a failed benchmark fails the job (an untrue result
// with status 65), a failed ingest does not (and a failed benchmark's
// result is not sent).
func TestIngestBadInput(t *testing.T) {
	t.Parallel()
	w := workload(t, "sweep.txtar")
	w.Bench, w.LMEval, w.BFCL = w.Bench[:1], nil, nil // one run is enough
	run := w.Bench[0]
	first := run.RunFiles[0] // the repetition that fails
	for _, c := range []struct {
		name string
		env  func(s *ingesttest.Server) []string
		code int
		line string // the one line, a regexp-free substring
		sent int    // rows the server must have
	}{
		{"empty token", func(s *ingesttest.Server) []string {
			return append(s.Env(), "INGEST_BEARER_TOKEN= ")
		}, 0, "ingest: INGEST_BEARER_TOKEN is empty: 1 perf row(s) of " + run.Name + " kept in ", 0},
		{"unreachable endpoint", func(s *ingesttest.Server) []string {
			return append(s.Env(), "PERF_INGEST_URL=http://127.0.0.1:1/")
		}, 0, "ingest: sent 0 of 1 perf row(s) of " + run.Name + " to http://127.0.0.1:1/; the first failure: curl: (7) Failed to connect to 127.0.0.1 port 1", 0},
		{"wrong token", func(s *ingesttest.Server) []string {
			return append(s.Env(), "INGEST_BEARER_TOKEN=wrong")
		}, 0, "the first failure: HTTP 401: missing or wrong bearer token", 0},
		{"truncated result", func(s *ingesttest.Server) []string {
			return append(s.Env(), "WLC_STUB_BENCH_RESULT=truncated")
		}, 65, first + ": not valid JSON (truncated?)", 0},
		{"zero completed", func(s *ingesttest.Server) []string {
			return append(s.Env(), "WLC_STUB_BENCH_RESULT=none-completed")
		}, 65, first + ": no request completed (0 of " + itoa(run.NumPrompts) + ")", 0},
		{"good", func(s *ingesttest.Server) []string { return s.Env() }, 0, "ingest: sent 1 perf row(s) of " + run.Name, 1},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			t.Parallel()
			srv := ingesttest.New(t, "tok-bad-input")
			j := runnertest.NewJob(t, native.Backend{}, w, c.env(srv)...)
			res := j.Run(t, 180*time.Second)
			if res.Code != c.code {
				t.Fatalf("exit %d, want %d:\n%s", res.Code, c.code, res.Output)
			}
			if n := strings.Count(res.Output, c.line); n != 1 {
				t.Errorf("%d lines with %q, want 1:\n%s", n, c.line, res.Output)
			}
			if n := len(srv.Rows("perf")); n != c.sent {
				t.Errorf("the server got %d perf rows, want %d", n, c.sent)
			}
			// The result stays; a row is kept exactly when the run passed.
			if _, err := os.Stat(filepath.Join(j.Results(), first)); err != nil {
				t.Errorf("the result is gone: %v", err)
			}
			kept, _ := filepath.Glob(filepath.Join(j.Results(), "ingest", "perf", "*.json"))
			if want := map[bool]int{true: 1, false: 0}[c.code == 0]; len(kept) != want {
				t.Errorf("%d perf rows kept, want %d", len(kept), want)
			}
			if c.code != 0 && !strings.Contains(res.Output, "ingest: no perf rows for "+run.Name+": its step did not pass") {
				t.Errorf("a failed run's ingest does not say why nothing was sent:\n%s", res.Output)
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
