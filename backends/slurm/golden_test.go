package slurm_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
	"mvdan.cc/sh/v3/syntax"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/backends/runner/runnertest"
	"github.com/wlcdev/wlc/backends/slurm"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/testenv"
)

// archive is one golden archive: a workloads package and the scripts it
// lowers to (want/<workload>.sbatch).
type archive struct {
	path string
	ar   *txtar.Archive
	dir  string // the package, extracted
}

func goldenArchives(t *testing.T) []*archive {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(testenv.RepoRoot(t), "testdata", "backends", "slurm", "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden archives: %v", err)
	}
	var out []*archive
	for _, p := range paths {
		ar, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		dir := runnertest.Extract(t, ar, func(name string) bool { return !strings.HasPrefix(name, "want/") })
		out = append(out, &archive{path: p, ar: ar, dir: dir})
	}
	return out
}

// plans loads dir/workloads (which must vet clean of errors) and resolves
// every workload, sorted by name.
func plans(t *testing.T, dir string) []plan.Workload {
	t.Helper()
	return runnertest.Resolve(t, runnertest.LoadDir(t, dir), nil, plan.Overrides{})
}

// lower lowers the archive's workloads and writes each script into dir.
func (a *archive) lower(t *testing.T, out string) map[string]string {
	t.Helper()
	arts, err := slurm.New().Lower(plans(t, a.dir), backends.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := backends.CheckArtifacts(arts); err != nil {
		t.Fatal(err)
	}
	scripts := map[string]string{}
	for _, art := range arts {
		if art.Mode != 0o755 {
			t.Errorf("%s has mode %v, want 0755", art.Path, art.Mode)
		}
		p := filepath.Join(out, art.Path)
		if err := os.WriteFile(p, art.Data, 0o755); err != nil {
			t.Fatal(err)
		}
		scripts[p] = string(art.Data)
	}
	return scripts
}

// TestGolden compares every archive's scripts with its want/ files;
// WLC_UPDATE=1 rewrites them.
func TestGolden(t *testing.T) {
	for _, a := range goldenArchives(t) {
		t.Run(filepath.Base(a.path), func(t *testing.T) {
			got := a.lower(t, t.TempDir())
			wantFiles := map[string]*txtar.File{}
			var kept []txtar.File
			for i, f := range a.ar.Files {
				if strings.HasPrefix(f.Name, "want/") {
					wantFiles[strings.TrimPrefix(f.Name, "want/")] = &a.ar.Files[i]
				} else {
					kept = append(kept, f)
				}
			}
			var names []string
			for p := range got {
				names = append(names, filepath.Base(p))
			}
			sort.Strings(names)
			if os.Getenv("WLC_UPDATE") == "1" {
				for _, n := range names {
					for p, s := range got {
						if filepath.Base(p) == n {
							kept = append(kept, txtar.File{Name: "want/" + n, Data: []byte(s)})
						}
					}
				}
				a.ar.Files = kept
				if err := os.WriteFile(a.path, txtar.Format(a.ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			for p, s := range got {
				n := filepath.Base(p)
				w, ok := wantFiles[n]
				if !ok {
					t.Errorf("%s: no want/%s in the archive (WLC_UPDATE=1 adds it)", a.path, n)
					continue
				}
				if string(w.Data) != s {
					t.Errorf("%s: %s differs from want/%s (WLC_UPDATE=1 rewrites it):\n%s", a.path, n, n, diffLines(string(w.Data), s))
				}
				delete(wantFiles, n)
			}
			for n := range wantFiles {
				t.Errorf("%s: want/%s was not generated", a.path, n)
			}
		})
	}
}

// diffLines shows the first differing line and its neighbours.
func diffLines(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + itoa(i+1) + ":\n  want: " + w + "\n  got:  " + g
		}
	}
	return ""
}

func itoa(i int) string { return fmtInt(i) }

func fmtInt(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// TestScriptsParseAndLint parses every generated script with mvdan.cc/sh
// and runs shellcheck on it.
func TestScriptsParseAndLint(t *testing.T) {
	out := t.TempDir()
	var files []string
	for _, a := range goldenArchives(t) {
		for p, s := range a.lower(t, out) {
			files = append(files, p)
			if _, err := syntax.NewParser(syntax.KeepComments(true), syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(s), p); err != nil {
				t.Errorf("%s does not parse: %v", filepath.Base(p), err)
			}
		}
	}
	sort.Strings(files)
	sc := testenv.LookPath(t, "shellcheck")
	cmd := exec.Command(sc, append([]string{"-s", "bash", "-f", "gcc"}, files...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("shellcheck: %v\n%s", err, out)
	}
}
