package native_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wlcdev/wlc/backends/native"
	"github.com/wlcdev/wlc/backends/runner/runnertest"
	"github.com/wlcdev/wlc/internal/results/ingest/ingesttest"
)

// TestHostileEnv: a workload whose env sets every variable the job's own
// machinery reads (runnertest.Hostile: the dashboards' URLs and token, row
// tags, PATH, BASH_ENV, SHELLOPTS, CURL_HOME, the proxies, PYTHONPATH,
// TMPDIR, PIP_*, ...) steers nothing: rows and the token reach only the
// configured dashboards, untagged; the server still gets all of it; and
// while the job runs no process but curl holds the token.
func TestHostileEnv(t *testing.T) {
	t.Parallel()
	w := workload(t, "sweep.txtar")
	w.BFCL = nil // python3 clients of its own; bench and lm_eval cover the clients
	w.Tools = w.Tools[:1]
	token := fmt.Sprintf("tok-hostile-%d", time.Now().UnixNano())
	srv := ingesttest.New(t, token)
	j := runnertest.NewJob(t, native.Backend{}, w, srv.Env()...)
	pp := envOf(j.Env, "PYTHONPATH")
	h := runnertest.NewHostile(t, pp)
	j.W.Env = append(j.W.Env, h.Env(envOf(j.Env, "PATH"), pp)...)
	j = runnertest.NewJob(t, native.Backend{}, j.W, srv.Env()...)
	stop := runnertest.TokenScan(token)
	res := j.Run(t, jobTimeout)
	holders, scans := stop()
	if scans < 5 {
		t.Errorf("only %d scans of the job's processes", scans)
	}
	for _, p := range holders {
		t.Errorf("a process other than curl held the token: %s", p)
	}
	h.Check(t, j, srv, res)
	j.NoProcessLeft(t)
}

// envOf is NAME's value in env (the last entry wins), else the test's.
func envOf(env []string, name string) string {
	v := os.Getenv(name)
	for _, kv := range env {
		if s, ok := strings.CutPrefix(kv, name+"="); ok {
			v = s
		}
	}
	return v
}
