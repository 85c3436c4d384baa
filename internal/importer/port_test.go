package importer_test

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"cuelang.org/go/cue/cuecontext"
	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/wlcdev/wlc/internal/importer"
	"github.com/wlcdev/wlc/internal/load"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// portedStems are the corpus originals with a hand port in workloads/
// (workloads/port_test.go keeps the table; every port is one file named
// after its stem).
func portedStems(t *testing.T, repo string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repo, "workloads", "*_*.cue"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		out = append(out, strings.TrimSuffix(filepath.Base(f), ".cue"))
	}
	sort.Strings(out)
	return out
}

// importDir writes a workloads package holding the repo's wlc.cue and
// profiles.cue and the imported files, and loads it.
func importDir(t *testing.T, repo string, files map[string][]byte) *load.Result {
	t.Helper()
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "cue.mod"), 0o755))
	must(os.MkdirAll(filepath.Join(dir, "workloads"), 0o755))
	mod, err := os.ReadFile(filepath.Join(repo, "cue.mod", "module.cue"))
	must(err)
	must(os.WriteFile(filepath.Join(dir, "cue.mod", "module.cue"), mod, 0o644))
	for _, f := range []string{"wlc.cue", "profiles.cue"} {
		b, err := os.ReadFile(filepath.Join(repo, "workloads", f))
		must(err)
		must(os.WriteFile(filepath.Join(dir, "workloads", f), b, 0o644))
	}
	for name, src := range files {
		must(os.WriteFile(filepath.Join(dir, "workloads", name), src, 0o644))
	}
	return load.Load(cuecontext.New(), filepath.Join(dir, "workloads"), dir)
}

var posPrefix = regexp.MustCompile(`^[^:]+:\d+:\d+: `)

// TestImportMatchesPorts imports every original that has a hand port and
// checks the resolved import asks vLLM for the same serve argv and env as
// the port — or, where the port documents a deliberate fix (a literal
// original kept in testdata/script/vet_original_<stem>.txtar), that wlc
// vet gives the import the same diagnostics as that literal original.
func TestImportMatchesPorts(t *testing.T) {
	corpus := filepath.Join(testenv.SharedDir(t), "corpus", "perf-eval", "workloads")
	repo := testenv.RepoRoot(t)
	ports := load.Load(cuecontext.New(), filepath.Join(repo, "workloads"), repo)
	if ports.Diags.HasErrors() {
		t.Fatalf("workloads/ does not load: %v", ports.Diags)
	}

	stems := portedStems(t, repo)
	if len(stems) != 29 {
		t.Errorf("%d hand ports, want the 29 of workloads/port_test.go", len(stems))
	}
	clean := map[string][]byte{}
	fixed := map[string][]byte{}
	for _, stem := range stems {
		data, err := os.ReadFile(filepath.Join(corpus, stem+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		r := importer.PerfEval(stem+".yaml", data)
		if r.Refused() {
			t.Errorf("%s refused: %v", stem, r.Findings)
			continue
		}
		if _, err := os.Stat(filepath.Join(repo, "testdata", "script", "vet_original_"+stem+".txtar")); err == nil {
			fixed[stem] = r.Source
		} else {
			clean[stem+".cue"] = r.Source
		}
	}

	imp := importDir(t, repo, clean)
	if imp.Diags.HasErrors() {
		t.Errorf("imports without a documented fix do not vet clean:\n%v", imp.Diags)
	}
	for name := range clean {
		stem := strings.TrimSuffix(name, ".cue")
		t.Run(stem, func(t *testing.T) {
			iw, ok := imp.Workload(stem)
			if !ok {
				t.Fatalf("import of %s did not load", stem)
			}
			pw, _ := ports.Workload(stem)
			ip, err := imp.Resolve(iw, plan.Overrides{})
			if err != nil {
				t.Fatal(err)
			}
			pp, err := ports.Resolve(pw, plan.Overrides{})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(pp.Serve.Args, ip.Serve.Args); d != "" {
				t.Errorf("serve argv differs from the hand port (-port +import):\n%s", d)
			}
			if d := cmp.Diff(pp.Env, ip.Env); d != "" {
				t.Errorf("env differs from the hand port (-port +import):\n%s", d)
			}
		})
	}

	for stem, src := range fixed {
		t.Run(stem, func(t *testing.T) {
			ar, err := txtar.ParseFile(filepath.Join(repo, "testdata", "script", "vet_original_"+stem+".txtar"))
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			idle := false
			for _, f := range ar.Files {
				if f.Name != "want" {
					continue
				}
				for _, l := range strings.Split(strings.TrimSpace(string(f.Data)), "\n") {
					if strings.HasPrefix(l, "wlc vet:") {
						continue
					}
					// The import says explicitly that perf-eval held GPUs the
					// server left idle (idle_gpus), so that error is gone.
					if strings.Contains(l, "so every reserved GPU is used") {
						idle = true
						continue
					}
					want = append(want, posPrefix.ReplaceAllString(l, ""))
				}
			}
			if idle != strings.Contains(string(src), "idle_gpus: {count:") {
				t.Errorf("the original leaves reserved GPUs idle: %v, but the import says idle_gpus: %v:\n%s", idle, !idle, src)
			}
			if len(want) == 0 && !idle {
				t.Fatal("the archive has no want diagnostics")
			}
			r := importDir(t, repo, map[string][]byte{stem + ".cue": src})
			var got []string
			for _, d := range r.Diags.Sorted() {
				got = append(got, posPrefix.ReplaceAllString(d.String(), ""))
			}
			sort.Strings(got)
			sort.Strings(want)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("vet diagnostics differ from the literal original's (-want +got):\n%s\nimport:\n%s", d, src)
			}
		})
	}
}
