// Package goldentest is the golden test every backend runs, and the one
// reader of its archives (testdata/backends/<backend>/*.txtar). Only tests
// import it.
//
// An archive holds, in this order:
//
//	a comment saying what the case shows
//	-- env --                    optional: the exporting environment, one
//	                             NAME=value a line (# starts a comment)
//	-- cue.mod/module.cue --     the workloads package
//	-- workloads/<file>.cue --
//	-- out/<artifact path> --    one per artifact, in the order Lower returns them
//
// The case is what `wlc export workloads` would write in that environment:
// the selection is WORKLOADS if env sets it, else the nightly workloads for
// a backend that exports those by default, else every workload (by name);
// the plans carry env's overrides, and Lower gets Options{Env: env,
// WorkloadsDir: "workloads"}.
//
// Run lowers each archive twice (the bytes must be identical), checks every
// artifact's mode, compares the artifacts with the out/ sections (names,
// order and bytes; a unified diff on a mismatch) and hands each artifact
// to the backend's own checks. WLC_UPDATE=1 rewrites the out/ sections
// from the lowering instead; read the diff before committing it.
package goldentest

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"cuelang.org/go/cue/cuecontext"
	"github.com/rogpeppe/go-internal/diff"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/internal/load"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/plan/selection"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

const (
	envSection = "env"
	outPrefix  = "out/"
)

// Case is one archive, loaded.
type Case struct {
	Path  string            // the archive file
	Env   map[string]string // the env section
	Plans []plan.Workload   // the selection, resolved
	Opts  backends.Options  // what Lower is given

	archive *txtar.Archive
}

// Archives lists testdata/backends/<backend>/*.txtar.
func Archives(t testing.TB, backend string) []string {
	t.Helper()
	dir := filepath.Join(testenv.RepoRoot(t), "testdata", "backends", backend)
	as, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil || len(as) == 0 {
		t.Fatalf("no golden archives in %s (%v)", dir, err)
	}
	return as
}

// Open reads an archive, checks its layout, and loads and resolves its
// selection for b (nil: a backend that exports every workload).
func Open(t testing.TB, archive string, b backends.Backend) *Case {
	t.Helper()
	c, r := Read(t, archive)
	names := selected(t, archive, r, c.Env, b)
	c.Plans = resolve(t, r, names, plan.OverridesFromEnv(func(k string) string { return c.Env[k] }))
	return c
}

// Read reads an archive, checks its layout and loads its workloads
// package, which must vet clean; the Case has no plans yet.
func Read(t testing.TB, archive string) (*Case, *load.Result) {
	t.Helper()
	a, err := txtar.ParseFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkLayout(a); err != nil {
		t.Fatalf("%s: %v", archive, err)
	}
	c := &Case{Path: archive, Env: map[string]string{}, archive: a}
	if len(a.Files) > 0 && a.Files[0].Name == envSection {
		c.Env = parseEnv(t, archive, a.Files[0].Data)
	}
	dir := extract(t, a, func(name string) bool { return name != envSection && !strings.HasPrefix(name, outPrefix) })
	c.Opts = backends.Options{Env: c.Env, WorkloadsDir: "workloads"}
	return c, loadDir(t, dir)
}

// checkLayout refuses sections the layout does not have, out of order, or
// twice.
func checkLayout(a *txtar.Archive) error {
	// The sections' kinds in the order the layout allows them.
	const (
		env = iota
		input
		out
	)
	last, seen := env, map[string]bool{}
	for i, f := range a.Files {
		var kind int
		switch {
		case f.Name == envSection && i == 0:
			kind = env
		case strings.HasPrefix(f.Name, outPrefix) && len(f.Name) > len(outPrefix):
			kind = out
		case strings.HasPrefix(f.Name, "cue.mod/"), strings.HasPrefix(f.Name, "workloads/"):
			kind = input
		default:
			return fmt.Errorf("section %q: the layout has env (first, optional), cue.mod/…, workloads/… and out/<artifact path>, in that order", f.Name)
		}
		if kind < last {
			return fmt.Errorf("section %q follows the out/ sections; inputs come first", f.Name)
		}
		if seen[f.Name] {
			return fmt.Errorf("section %q appears twice", f.Name)
		}
		last, seen[f.Name] = kind, true
	}
	return nil
}

func parseEnv(t testing.TB, archive string, data []byte) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s: env line %q is not NAME=value", archive, line)
		}
		env[k] = v
	}
	return env
}

// selected is wlc export's default selection for b in env.
func selected(t testing.TB, archive string, r *load.Result, env map[string]string, b backends.Backend) []string {
	t.Helper()
	var cands []selection.Candidate
	for _, w := range r.Workloads {
		cands = append(cands, selection.Candidate{Name: w.Name, File: w.File, Nightly: w.Nightly})
	}
	var names []string
	var err error
	nd, _ := b.(interface{ NightlyByDefault() bool })
	switch entries := selection.Split(env["WORKLOADS"]); {
	case len(entries) > 0:
		names, err = selection.Pick(cands, entries)
	case nd != nil && nd.NightlyByDefault():
		names, err = selection.Nightly(cands)
	default:
		for _, c := range cands {
			names = append(names, c.Name)
		}
		sort.Strings(names)
	}
	if err != nil {
		t.Fatalf("%s: %v", archive, err)
	}
	return names
}

// extract writes the archive's files that keep accepts into a temporary
// directory and returns it.
func extract(t testing.TB, a *txtar.Archive, keep func(name string) bool) string {
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

// loadDir loads dir/workloads, which must vet without errors.
func loadDir(t testing.TB, dir string) *load.Result {
	t.Helper()
	r := load.Load(cuecontext.New(), filepath.Join(dir, "workloads"), dir)
	if r.Diags.HasErrors() {
		var b bytes.Buffer
		r.Diags.WriteText(&b)
		t.Fatalf("the package in %s does not vet:\n%s", dir, b.String())
	}
	return r
}

// resolve resolves the named workloads in that order.
func resolve(t testing.TB, r *load.Result, names []string, ov plan.Overrides) []plan.Workload {
	t.Helper()
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

// Lower lowers the case through b twice, fails unless both give the same
// artifacts (paths, bytes, modes), checks their paths and returns them.
func (c *Case) Lower(t testing.TB, b backends.Backend) []backends.Artifact {
	t.Helper()
	first, err := b.Lower(c.Plans, c.Opts)
	if err != nil {
		t.Fatalf("%s: Lower: %v", c.Path, err)
	}
	second, err := b.Lower(c.Plans, c.Opts)
	if err != nil {
		t.Fatalf("%s: the second Lower: %v", c.Path, err)
	}
	if !slices.EqualFunc(first, second, sameArtifact) {
		t.Fatalf("%s: two lowerings differ: %s and %s", c.Path, paths(first), paths(second))
	}
	if err := backends.CheckArtifacts(first); err != nil {
		t.Fatalf("%s: %v", c.Path, err)
	}
	return first
}

func sameArtifact(a, b backends.Artifact) bool {
	return a.Path == b.Path && a.Mode == b.Mode && bytes.Equal(a.Data, b.Data)
}

func paths(as []backends.Artifact) string {
	var s []string
	for _, a := range as {
		s = append(s, a.Path)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// Checks are a backend's own checks, run on every archive's lowering (in
// update mode too).
type Checks struct {
	// Mode is every artifact's file mode.
	Mode fs.FileMode
	// Artifact checks one artifact, e.g. parses or lints it.
	Artifact func(t *testing.T, c *Case, a backends.Artifact)
	// Case checks the archive's artifacts together, after Artifact.
	Case func(t *testing.T, c *Case, arts []backends.Artifact)
	// View renders an artifact for the diff shown when it differs (nil:
	// its bytes), e.g. with compressed parts decoded.
	View func(data []byte) []byte
}

// Run is the golden test of backend b over testdata/backends/<b.Name()>/:
// one parallel subtest per archive.
func Run(t *testing.T, b backends.Backend, checks Checks) {
	t.Helper()
	update := os.Getenv("WLC_UPDATE") == "1"
	for _, archive := range Archives(t, b.Name()) {
		t.Run(strings.TrimSuffix(filepath.Base(archive), ".txtar"), func(t *testing.T) {
			t.Parallel()
			c := Open(t, archive, b)
			arts := c.Lower(t, b)
			for _, a := range arts {
				if a.Mode != checks.Mode {
					t.Errorf("%s: mode %v, want %v", a.Path, a.Mode, checks.Mode)
				}
				if !bytes.HasSuffix(a.Data, []byte("\n")) {
					t.Errorf("%s does not end in a newline (an archive section cannot hold it)", a.Path)
				}
			}
			if update {
				c.rewrite(t, arts)
			} else {
				c.compare(t, arts, checks.View)
			}
			for _, a := range arts {
				if checks.Artifact != nil {
					checks.Artifact(t, c, a)
				}
			}
			if checks.Case != nil {
				checks.Case(t, c, arts)
			}
		})
	}
}

// want is the archive's out/ sections as artifacts, in archive order.
func (c *Case) want() []backends.Artifact {
	var as []backends.Artifact
	for _, f := range c.archive.Files {
		if p, ok := strings.CutPrefix(f.Name, outPrefix); ok {
			as = append(as, backends.Artifact{Path: p, Data: f.Data})
		}
	}
	return as
}

func (c *Case) compare(t *testing.T, got []backends.Artifact, view func([]byte) []byte) {
	t.Helper()
	for _, m := range mismatches(c.want(), got, view) {
		t.Errorf("%s: %s (WLC_UPDATE=1 rewrites the out/ sections; read the diff)", c.Path, m)
	}
}

// mismatches says how got differs from want: the artifacts' names and
// order, and a unified diff of each one's bytes (through view, if set).
func mismatches(want, got []backends.Artifact, view func([]byte) []byte) []string {
	if view == nil {
		view = func(b []byte) []byte { return b }
	}
	var ms []string
	if paths(want) != paths(got) {
		ms = append(ms, fmt.Sprintf("the lowering gives the artifacts %s, the archive's out/ sections are %s", paths(got), paths(want)))
	}
	for _, g := range got {
		i := slices.IndexFunc(want, func(w backends.Artifact) bool { return w.Path == g.Path })
		if i < 0 || bytes.Equal(want[i].Data, g.Data) {
			continue
		}
		d := diff.Diff(outPrefix+g.Path, view(want[i].Data), "lowered", view(g.Data))
		if d == nil { // the view hides the difference
			d = diff.Diff(outPrefix+g.Path, want[i].Data, "lowered", g.Data)
		}
		ms = append(ms, fmt.Sprintf("%s%s differs from the lowering:\n%s", outPrefix, g.Path, d))
	}
	return ms
}

// rewrite replaces the archive's out/ sections with arts.
func (c *Case) rewrite(t *testing.T, arts []backends.Artifact) {
	t.Helper()
	a := &txtar.Archive{Comment: c.archive.Comment}
	for _, f := range c.archive.Files {
		if !strings.HasPrefix(f.Name, outPrefix) {
			a.Files = append(a.Files, f)
		}
	}
	for _, art := range arts {
		a.Files = append(a.Files, txtar.File{Name: outPrefix + art.Path, Data: art.Data})
	}
	data := txtar.Format(a)
	if old, err := os.ReadFile(c.Path); err == nil && bytes.Equal(old, data) {
		return
	}
	if err := os.WriteFile(c.Path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("rewrote %s", c.Path)
}
