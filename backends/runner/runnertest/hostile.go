package runnertest

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/results/ingest/ingesttest"
)

// Hostile is a workload environment that sets every variable the job's
// own machinery reads (lib.sh and the runtimes' shell, curl, python3 for
// results.py and ingest.py, pip in tools.sh, bash for preflight.sh and
// provenance.sh), each to a value that would show if it were read: the
// dashboards' URLs and every proxy name curl honours point at a decoy
// listener, a token and row tags are forged, bash and python3 start-up
// files append to a trap log, the temporary directory is one the test
// inspects. The server and the clients must still get all of it.
type Hostile struct {
	Dir   string // the trap files
	Log   string // what a trap appends to
	Tmp   string // the workload's TMPDIR
	decoy *httptest.Server
	mu    sync.Mutex
	hits  []string // requests the decoy received
}

// Forged is in every forged value: no row may carry it.
const Forged = "wlc-forged"

// NewHostile makes the traps.
func NewHostile(t testing.TB) *Hostile {
	t.Helper()
	h := &Hostile{Dir: t.TempDir()}
	h.Log = filepath.Join(h.Dir, "trap.log")
	h.Tmp = filepath.Join(h.Dir, "tmp")
	h.decoy = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := make([]byte, 200)
		n, _ := r.Body.Read(body)
		h.mu.Lock()
		h.hits = append(h.hits, fmt.Sprintf("%s %s auth=%q body=%q", r.Method, r.URL, r.Header.Get("Authorization"), body[:n]))
		h.mu.Unlock()
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(`{"status":"ok"}`))
	}))
	t.Cleanup(h.decoy.Close)
	files := map[string]string{
		"bashenv.sh": `printf 'bash read BASH_ENV/ENV: %s %s\n' "$0" "$*" >>` + quote(h.Log) + "\n",
		"curlrc":     "proxy = \"" + h.decoy.URL + "\"\nnoproxy = \"\"\nheader = \"Authorization: Bearer " + Forged + "\"\n",
		".curlrc":    "proxy = \"" + h.decoy.URL + "\"\nnoproxy = \"\"\nheader = \"Authorization: Bearer " + Forged + "\"\n",
		"token":      Forged + "-token\n",
		"header":     "Authorization: Bearer " + Forged + "-token\n",
		"pip.conf":   "[global]\nindex-url = " + h.decoy.URL + "/simple\n",
		// The job's own python3 runs (results.py, ingest.py, the tools
		// check) are recognised by their arguments.
		"py/sitecustomize.py": "import sys\n" +
			"a = sys.argv\n" +
			"if a[:1] == ['-c'] and (a[1:2] and a[1] in ('check', 'median', 'last-row', 'perf', 'eval', 'bfcl') or a[2:3] and a[2] in ('install', 'image')):\n" +
			"    open(" + strconv.Quote(h.Log) + ", 'a').write('python3 read PYTHONPATH: %r\\n' % (a[:3],))\n",
	}
	for name, data := range files {
		p := filepath.Join(h.Dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(h.Tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	// curl, pip and mktemp first on the workload's PATH: they say so, then
	// run the real one (the clients run none of them).
	for _, prog := range []string{"curl", "pip", "pip3", "mktemp"} {
		real, err := exec.LookPath(prog)
		if err != nil {
			continue
		}
		p := filepath.Join(h.Dir, "bin", prog)
		script := "#!/bin/sh\nprintf '%s\\n' " + quote(prog+" found on the workload's PATH") + " >>" + quote(h.Log) + "\nexec " + quote(real) + " \"$@\"\n"
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// HostileGroups name the parts of Hostile's env: what the dashboards'
// sender reads (URLs, token, tags), what bash reads (and PATH), and what
// the tools the job runs read (curl, python3, pip, the linker).
var HostileGroups = []string{"dashboards", "shell", "tools"}

// Env is the hostile workload env (only groups, when named), for a job
// whose own PATH and PYTHONPATH are path and pythonPath (the workload's
// extend them, so the server and clients still find the stubs).
func (h *Hostile) Env(path, pythonPath string, groups ...string) []plan.EnvVar {
	d := h.decoy.URL
	kv := [][3]string{
		// The dashboards: where rows and the token go, which rows, tags.
		{"dashboards", "PERF_INGEST_URL", d + "/perf/"},
		{"dashboards", "INGEST_URL", d + "/eval/"},
		{"dashboards", "INGEST_BEARER_TOKEN", Forged + "-token"},
		{"dashboards", "WLC_INGEST_TOKEN_FILE", filepath.Join(h.Dir, "token")},
		{"dashboards", "WLC_INGEST_HEADER", filepath.Join(h.Dir, "header")},
		{"dashboards", "INGEST_NO_SAMPLES", "1"},
		{"dashboards", "NIGHTLY", "1"},
		{"dashboards", "WLC_JOB_HASH", Forged},
		{"dashboards", "WLC_SWEEP_DIR", Forged},
		{"dashboards", "BUILDKITE_BUILD_ID", Forged},
		{"dashboards", "BUILDKITE_BUILD_NUMBER", Forged},
		{"dashboards", "BUILDKITE_BUILD_URL", "https://" + Forged},
		{"dashboards", "BUILDKITE_BRANCH", Forged},
		{"dashboards", "BUILDKITE_COMMIT", Forged},
		{"dashboards", "BUILDKITE_PIPELINE_SLUG", Forged},
		{"dashboards", "BUILDKITE_JOB_ID", Forged},
		// lib.sh's own settings.
		{"dashboards", "WLC_PERF_INGEST_DEFAULT", d + "/perf/"},
		{"dashboards", "WLC_EVAL_INGEST_DEFAULT", d + "/eval/"},
		{"dashboards", "WLC_RESULTS_DIR", filepath.Join(h.Dir, "results")},
		{"dashboards", "WLC_RUN_ID", Forged},
		// bash: start-up files, options, the prompt of a trace.
		{"shell", "BASH_ENV", filepath.Join(h.Dir, "bashenv.sh")},
		{"shell", "ENV", filepath.Join(h.Dir, "bashenv.sh")},
		{"shell", "SHELLOPTS", "xtrace"},
		{"shell", "PS4", "+" + Forged + "-xtrace "},
		{"shell", "CDPATH", h.Dir},
		{"shell", "GLOBIGNORE", "*"},
		{"shell", "TMPDIR", h.Tmp},
		// The programs the job runs, found on PATH.
		{"shell", "PATH", filepath.Join(h.Dir, "bin") + string(os.PathListSeparator) + path},
		// curl: its config file, every proxy variable.
		{"tools", "CURL_HOME", h.Dir},
		{"tools", "HOME", h.Dir},
		{"tools", "http_proxy", d},
		{"tools", "HTTP_PROXY", d},
		{"tools", "https_proxy", d},
		{"tools", "HTTPS_PROXY", d},
		{"tools", "ALL_PROXY", d},
		{"tools", "all_proxy", d},
		{"tools", "NO_PROXY", ""},
		{"tools", "no_proxy", ""},
		{"tools", "CURL_CA_BUNDLE", filepath.Join(h.Dir, "missing-ca.pem")},
		{"tools", "SSL_CERT_FILE", filepath.Join(h.Dir, "missing-ca.pem")},
		// python3: start-up code, and the interpreter's own switches.
		{"tools", "PYTHONPATH", filepath.Join(h.Dir, "py") + string(os.PathListSeparator) + pythonPath},
		{"tools", "PYTHONSAFEPATH", "1"},
		{"tools", "PYTHONUSERBASE", filepath.Join(h.Dir, "userbase")},
		// pip.
		{"tools", "PIP_INDEX_URL", d + "/simple"},
		{"tools", "PIP_CONFIG_FILE", filepath.Join(h.Dir, "pip.conf")},
		{"tools", "PIP_TARGET", filepath.Join(h.Dir, "pip-target")},
		// The dynamic linker.
		{"tools", "LD_LIBRARY_PATH", filepath.Join(h.Dir, "lib")},
	}
	var out []plan.EnvVar
	for _, e := range kv {
		if len(groups) == 0 || slices.Contains(groups, e[0]) {
			out = append(out, plan.EnvVar{Name: e[1], Value: e[2]})
		}
	}
	return out
}

// Sighting is a process seen holding the token, when.
type Sighting struct {
	At   time.Time
	What string
}

// TokenScan watches every process this user can see for token while a
// job runs: in its environment, or held open as a file (an fd whose file
// holds it). Only curl, the sender, may hold it, and the processes named
// in others (not the job's: e.g. slurmctld, whose state keeps a job's
// submitted environment). Stop it with the returned function, which
// reports what it saw and how many scans it made.
func TokenScan(token string, others ...string) (stop func() (holders []Sighting, scans int)) {
	done := make(chan struct{})
	var (
		mu    sync.Mutex
		seen  = map[string]bool{}
		found []Sighting
		n     int
	)
	tok := []byte(token)
	self := strconv.Itoa(os.Getpid())
	scan := func() {
		pids, _ := filepath.Glob("/proc/[0-9]*")
		for _, p := range pids {
			pid := filepath.Base(p)
			if pid == self {
				continue
			}
			comm, _ := os.ReadFile(p + "/comm")
			name := strings.TrimSpace(string(comm))
			if name == "curl" || slices.Contains(others, name) {
				continue
			}
			var what []string
			if env, err := os.ReadFile(p + "/environ"); err == nil && bytes.Contains(env, tok) {
				what = append(what, "environ")
			}
			fds, _ := filepath.Glob(p + "/fd/*")
			for _, fd := range fds {
				target, err := os.Readlink(fd)
				if err != nil || !strings.HasPrefix(target, "/") {
					continue
				}
				if st, err := os.Stat(target); err != nil || !st.Mode().IsRegular() || st.Size() > 1<<16 {
					continue
				}
				if data, err := os.ReadFile(target); err == nil && bytes.Contains(data, tok) {
					what = append(what, "fd "+filepath.Base(fd)+" ("+target+")")
				}
			}
			if len(what) > 0 {
				cmd, _ := os.ReadFile(p + "/cmdline")
				key := fmt.Sprintf("pid %s %s [%s]: %s", pid, name, strings.Join(what, ", "), bytes.ReplaceAll(bytes.TrimRight(cmd, "\x00"), []byte{0}, []byte{' '}))
				if len(key) > 300 {
					key = key[:300]
				}
				mu.Lock()
				if !seen[key] {
					seen[key] = true
					found = append(found, Sighting{time.Now(), key})
				}
				mu.Unlock()
			}
		}
		mu.Lock()
		n++
		mu.Unlock()
	}
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-done:
				return
			default:
			}
			scan()
			time.Sleep(50 * time.Millisecond)
		}
	}()
	return func() ([]Sighting, int) {
		close(done)
		<-finished
		mu.Lock()
		defer mu.Unlock()
		return found, n
	}
}

// Check asserts what a hostile workload env must not achieve, for a job
// that ran against srv (the configured dashboards): the job passed; the
// decoy got nothing; srv got the rows with the real token (none refused)
// and samples; no row carries a forged value or NIGHTLY's tag; no trap
// fired; no bash traced itself; the job's own temporary files are not in
// the workload's TMPDIR; the server got the workload's env.
func (h *Hostile) Check(t testing.TB, j *Job, srv *ingesttest.Server, res Result) {
	t.Helper()
	if res.Code != 0 {
		t.Fatalf("the job exited %d, want 0:\n%s", res.Code, res.Output)
	}
	h.mu.Lock()
	hits := append([]string(nil), h.hits...)
	h.mu.Unlock()
	for _, hit := range hits {
		t.Errorf("the decoy the workload's env names received: %s", hit)
	}
	if r := srv.Refused(); len(r) > 0 {
		t.Errorf("the dashboards refused requests (a forged token?): %q", r)
	}
	perf, eval := srv.Rows("perf"), srv.Rows("eval")
	if len(perf)+len(eval) == 0 {
		t.Errorf("no rows reached the configured dashboards:\n%s", res.Output)
	}
	samples := 0
	for _, r := range append(perf, eval...) {
		if strings.Contains(string(r.Raw), Forged) || r.Body["nightly"] == true {
			t.Errorf("a row carries a forged tag: %.400s", r.Raw)
		}
		if _, ok := r.Body["samples"]; ok {
			samples++
		}
	}
	if len(j.W.LMEval) > 0 && samples == 0 {
		t.Errorf("no sample rows: the workload's INGEST_NO_SAMPLES reached the ingest")
	}
	if log, err := os.ReadFile(h.Log); err == nil && len(log) > 0 {
		t.Errorf("the job's own tools read the workload's env:\n%s", log)
	}
	if strings.Contains(res.Output, Forged+"-xtrace") {
		t.Errorf("a bash of the job traced itself (the workload's SHELLOPTS/PS4)")
	}
	left, _ := filepath.Glob(filepath.Join(h.Tmp, "*"))
	for _, f := range left {
		if b := filepath.Base(f); strings.HasPrefix(b, "wlc-") || strings.HasPrefix(b, "tmp.") {
			t.Errorf("the job's own temporary file is in the workload's TMPDIR: %s", f)
		}
	}
	if _, err := os.Stat(filepath.Join(h.Dir, "results")); err == nil {
		t.Errorf("the workload's WLC_RESULTS_DIR moved the results")
	}
	servers := Find(j.Records(t), "vllm", "serve")
	if len(servers) == 0 {
		t.Fatalf("no server ran")
	}
	for _, s := range servers {
		for _, e := range j.W.Env {
			if got := s.Env[e.Name]; got != e.Value {
				t.Errorf("the server's %s = %q, want the workload's %q", e.Name, got, e.Value)
			}
		}
	}
}

// RunHostile runs w through b with the Hostile env's groups (all when
// none) added to the workload's, against a stand-in of the dashboards
// (the job's own environment names it, with the token), scanning every
// process for the token meanwhile, and checks the job (Hostile.Check).
func RunHostile(t *testing.T, b backends.Backend, w plan.Workload, timeout time.Duration, groups ...string) {
	t.Helper()
	token := fmt.Sprintf("tok-hostile-%d", time.Now().UnixNano())
	srv := ingesttest.New(t, token)
	probe := NewJob(t, b, w, srv.Env()...)
	h := NewHostile(t)
	w.Env = append(append([]plan.EnvVar(nil), w.Env...), h.Env(envOf(probe.Env, "PATH"), envOf(probe.Env, "PYTHONPATH"), groups...)...)
	j := NewJob(t, b, w, srv.Env()...)
	stop := TokenScan(token)
	res := j.Run(t, timeout)
	holders, scans := stop()
	CheckHolders(t, j, holders, scans)
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

// CheckHolders fails on every sighting of the token while j's server ran
// (from its first start to its last stop; the job script's first instants,
// before it moved the token into its file, are not): the server, the
// clients and the job's own tools must not hold it then.
func CheckHolders(t testing.TB, j *Job, holders []Sighting, scans int) {
	t.Helper()
	rs := j.Records(t)
	servers := Find(rs, "vllm", "serve")
	if len(servers) == 0 {
		t.Errorf("no server ran")
		return
	}
	from, to := servers[0].Time, time.Now()
	for _, s := range servers {
		if s.Time.Before(from) {
			from = s.Time
		}
	}
	if stopped := Find(rs, "vllm", "stopped"); len(stopped) > 0 {
		to = stopped[0].Time
		for _, s := range stopped {
			if s.Time.After(to) {
				to = s.Time
			}
		}
	}
	during := 0
	for _, h := range holders {
		if h.At.Before(from) || h.At.After(to) {
			continue
		}
		during++
		t.Errorf("while the server ran, a process other than curl held the token: %s", h.What)
	}
	if scans < 5 {
		t.Errorf("only %d scans of the processes while the job ran", scans)
	}
	t.Logf("%d scans of every process; %d sightings of the token, %d while the server ran (%v)", scans, len(holders), during, to.Sub(from).Round(time.Millisecond))
}
