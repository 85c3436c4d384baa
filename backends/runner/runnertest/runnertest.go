// Package runnertest holds the test helpers the runner backends (docker,
// native, and the Slurm backend) share: loading a txtar archive of CUE
// workloads into plans, golden comparison of lowered scripts, parsing with
// mvdan.cc/sh, shellcheck, and running a script with the stubs of
// internal/stub first on PATH.
//
// A golden archive holds the input (cue.mod/module.cue, workloads/*.cue)
// and one section out/<artifact path> per expected artifact. WLC_UPDATE=1
// rewrites the out/ sections from the code.
package runnertest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"cuelang.org/go/cue/cuecontext"
	"github.com/rogpeppe/go-internal/txtar"
	"mvdan.cc/sh/v3/syntax"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/internal/load"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/testenv"
)

// Load extracts the archive's input files into a temporary directory and
// loads and resolves every workload in it (no export-time overrides).
func Load(t testing.TB, archive string) (*txtar.Archive, []plan.Workload) {
	t.Helper()
	a, err := txtar.ParseFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	dir := Extract(t, a, func(name string) bool { return !strings.HasPrefix(name, "out/") })
	return a, Resolve(t, LoadDir(t, dir), nil, plan.Overrides{})
}

// Extract writes the archive's files that keep accepts into a temporary
// directory and returns it.
func Extract(t testing.TB, a *txtar.Archive, keep func(name string) bool) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range a.Files {
		if !keep(f.Name) {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// LoadDir loads dir/workloads, which must vet without errors.
func LoadDir(t testing.TB, dir string) *load.Result {
	t.Helper()
	r := load.Load(cuecontext.New(), filepath.Join(dir, "workloads"), dir)
	if r.Diags.HasErrors() {
		var b bytes.Buffer
		r.Diags.WriteText(&b)
		t.Fatalf("the package in %s does not vet:\n%s", dir, b.String())
	}
	return r
}

// Resolve resolves the named workloads in that order, or every workload
// sorted by name when names is nil.
func Resolve(t testing.TB, r *load.Result, names []string, ov plan.Overrides) []plan.Workload {
	t.Helper()
	if names == nil {
		for _, w := range r.Workloads {
			names = append(names, w.Name)
		}
		sort.Strings(names)
	}
	var ws []plan.Workload
	for _, n := range names {
		w, ok := r.Workload(n)
		if !ok {
			t.Fatalf("no workload %s", n)
		}
		p, err := r.Resolve(w, ov)
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, p)
	}
	return ws
}

// Lower lowers ws through b twice, fails unless both runs give the same
// bytes, and returns the artifacts.
func Lower(t testing.TB, b backends.Backend, ws []plan.Workload) []backends.Artifact {
	t.Helper()
	first, err := b.Lower(ws, backends.Options{})
	if err != nil {
		t.Fatal(err)
	}
	second, err := b.Lower(ws, backends.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != len(second) {
		t.Fatalf("two lowerings gave %d and %d artifacts", len(first), len(second))
	}
	for i := range first {
		if first[i].Path != second[i].Path || !bytes.Equal(first[i].Data, second[i].Data) || first[i].Mode != second[i].Mode {
			t.Fatalf("two lowerings of %s differ", first[i].Path)
		}
	}
	if err := backends.CheckArtifacts(first); err != nil {
		t.Fatal(err)
	}
	return first
}

// Golden lowers the archive's workloads through b and compares every
// artifact with the archive's out/<path> section (WLC_UPDATE=1 rewrites
// them). It returns the artifacts.
func Golden(t *testing.T, b backends.Backend, archive string) []backends.Artifact {
	t.Helper()
	a, ws := Load(t, archive)
	arts := Lower(t, b, ws)
	want := map[string][]byte{}
	var in []txtar.File
	for _, f := range a.Files {
		if name, ok := strings.CutPrefix(f.Name, "out/"); ok {
			want[name] = f.Data
		} else {
			in = append(in, f)
		}
	}
	if os.Getenv("WLC_UPDATE") == "1" {
		for _, art := range arts {
			in = append(in, txtar.File{Name: "out/" + art.Path, Data: art.Data})
		}
		a.Files = in
		if err := os.WriteFile(archive, txtar.Format(a), 0o644); err != nil {
			t.Fatal(err)
		}
		return arts
	}
	for _, art := range arts {
		w, ok := want[art.Path]
		if !ok {
			t.Errorf("%s: no out/%s section (run with WLC_UPDATE=1)", archive, art.Path)
			continue
		}
		if !bytes.Equal(w, art.Data) {
			t.Errorf("%s: out/%s differs from the lowering (run with WLC_UPDATE=1 and review the diff)", archive, art.Path)
		}
		delete(want, art.Path)
	}
	for p := range want {
		t.Errorf("%s: out/%s is not produced any more", archive, p)
	}
	return arts
}

// Parse parses a script with mvdan.cc/sh's bash parser.
func Parse(t testing.TB, name string, data []byte) *syntax.File {
	t.Helper()
	f, err := syntax.NewParser(syntax.KeepComments(true), syntax.Variant(syntax.LangBash)).Parse(bytes.NewReader(data), name)
	if err != nil {
		t.Fatalf("%s does not parse as bash: %v", name, err)
	}
	return f
}

// Shellcheck runs shellcheck on the script (skipped where shellcheck is
// absent, a failure under CI).
func Shellcheck(t testing.TB, name string, data []byte) {
	t.Helper()
	sc := testenv.LookPath(t, "shellcheck")
	p := filepath.Join(t.TempDir(), filepath.Base(name))
	if err := os.WriteFile(p, data, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(sc, "-s", "bash", "-f", "gcc", p).CombinedOutput()
	if err != nil {
		t.Errorf("shellcheck %s: %v\n%s", name, err, out)
	}
}

// Result is one script run.
type Result struct {
	Code   int
	Output string // stdout and stderr interleaved
	Took   time.Duration
}

// Run runs `bash script` in dir with env added to the current environment
// and a deadline; the script's process group is killed if it overruns.
func Run(t testing.TB, script, dir string, env []string, timeout time.Duration) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// Background helpers that keep the output pipe open must not hang the test.
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	res := Result{Output: out.String(), Took: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.Code = ee.ExitCode()
	default:
		t.Fatalf("running %s: %v\n%s", script, err, res.Output)
	}
	if ctx.Err() != nil {
		t.Fatalf("%s did not finish within %v:\n%s", script, timeout, res.Output)
	}
	return res
}

// Alive reports whether pid still runs (a zombie counts as gone).
func Alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// The state follows the parenthesized command name.
	s := string(data)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}
