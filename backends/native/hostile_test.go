package native_test

import (
	"testing"

	"github.com/wlcdev/wlc/backends/native"
	"github.com/wlcdev/wlc/backends/runner/runnertest"
)

// TestHostileEnv: a workload whose env sets every variable the job's own
// machinery reads (runnertest.Hostile: the dashboards' URLs and token, row
// tags, PATH, BASH_ENV, SHELLOPTS, TMPDIR, CURL_HOME, the proxies,
// PYTHONPATH, PIP_*, ...), all at once and each group alone, steers
// nothing: rows and the token reach only the configured dashboards,
// untagged; the server still gets all of it; and while the job runs no
// process but curl holds the token.
func TestHostileEnv(t *testing.T) {
	t.Parallel()
	w := workload(t, "sweep.txtar")
	w.BFCL = nil // bench and lm_eval are the clients here
	w.Tools = w.Tools[:1]
	for _, g := range append([]string{"all"}, runnertest.HostileGroups...) {
		t.Run(g, func(t *testing.T) {
			t.Parallel()
			var groups []string
			if g != "all" {
				groups = []string{g}
			}
			runnertest.RunHostile(t, native.Backend{}, w, jobTimeout, groups...)
		})
	}
}
