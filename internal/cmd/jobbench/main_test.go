package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// TestSmoke runs the benchmark once with tiny delays: every variant's job
// passes under the stubs, wlc installs the missing tool once (and not when
// the image has it), perf-eval's setup installs it too, and the report
// has every row and the targets line. Timings are not asserted: the
// machine may be busy; the benchmark reports them.
func TestSmoke(t *testing.T) {
	shared := testenv.SharedDir(t)
	if _, err := os.Stat(filepath.Join(shared, "corpus", "perf-eval", "runtime", "main", "lib", "run.sh")); err != nil {
		testenv.Missing(t, "perf-eval's runtime in the reference corpus ("+shared+")")
	}
	testenv.LookPath(t, "curl")
	testenv.LookPath(t, "setsid")
	if !portFree(8000) {
		t.Skip("port 8000, where perf-eval's server listens, is taken")
	}
	var out strings.Builder
	if err := run(options{s: 0.5, p: 0.3, b: 0.1, e: 0.1, reps: 1, shared: shared}, &out); err != nil {
		t.Fatal(err)
	}
	t.Log(out.String())
	for v, installs := range map[string]string{"wlc": "1", "wlc-present": "0", "perf-eval": "1"} {
		row := regexp.MustCompile(`(?m)^` + v + `\s.*\s(\d+)$`).FindStringSubmatch(out.String())
		if row == nil || row[1] != installs {
			t.Errorf("the %s row is missing or shows %v pip installs, want %s:\n%s", v, row, installs, out.String())
		}
	}
	for _, want := range []string{"the install's cost to wlc", "perf-eval's overhead / wlc's", "targets (wlc, medians)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}
