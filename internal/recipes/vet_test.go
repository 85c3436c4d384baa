package recipes

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"cuelang.org/go/cue/cuecontext"

	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

var update = flag.Bool("update", false, "rewrite golden files")

func corpus(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(testenv.SharedDir(t), "corpus", "recipes")
	if _, err := os.Stat(filepath.Join(dir, "taxonomy.yaml")); err != nil {
		testenv.Missing(t, "../shared/corpus/recipes is absent")
	}
	return dir
}

func loadCorpus(t testing.TB) *Set {
	t.Helper()
	dir := corpus(t)
	s, err := Load(cuecontext.New(), dir, dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCorpusFindings asserts the exact set of findings on the upstream
// corpus: every file loads, and each finding was checked by hand against
// its file (testdata/recipes/corpus_findings.txt, one per line, with kind).
func TestCorpusFindings(t *testing.T) {
	s := loadCorpus(t)
	var b strings.Builder
	for _, f := range Vet(s) {
		b.WriteString(f.Kind + "\t" + f.Diagnostic.String() + "\n")
	}
	golden := filepath.Join(testenv.RepoRoot(t), "testdata", "recipes", "corpus_findings.txt")
	if *update {
		os.MkdirAll(filepath.Dir(golden), 0o755)
		os.WriteFile(golden, []byte(b.String()), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("findings differ from %s (go test -run TestCorpusFindings -update to rewrite after checking):\n%s", golden, lineDiff(string(want), got))
	}
	if len(s.Recipes) != 11 || len(s.Strategies) != 9 || len(s.Profiles) != 26 {
		t.Errorf("loaded %d recipes, %d strategies, %d profiles; want 11, 9, 26", len(s.Recipes), len(s.Strategies), len(s.Profiles))
	}
	for _, f := range Vet(s) {
		if f.Kind == KindSchema {
			t.Errorf("corpus file rejected by the schema: %s", f.Diagnostic)
		}
	}
}

func lineDiff(want, got string) string {
	w := map[string]bool{}
	for _, l := range strings.Split(want, "\n") {
		w[l] = true
	}
	g := map[string]bool{}
	var b strings.Builder
	for _, l := range strings.Split(got, "\n") {
		g[l] = true
		if !w[l] {
			b.WriteString("+ " + l + "\n")
		}
	}
	for _, l := range strings.Split(want, "\n") {
		if !g[l] {
			b.WriteString("- " + l + "\n")
		}
	}
	return b.String()
}

// countsPerKind renders the findings' counts per kind and severity, one
// "kind severity count" line each, sorted.
func countsPerKind(fs Findings, recipes int) string {
	n := map[string]int{}
	for _, f := range fs {
		n[f.Kind+" "+string(f.Severity)]++
	}
	var lines []string
	for k, c := range n {
		lines = append(lines, fmt.Sprintf("%s %d", k, c))
	}
	sort.Strings(lines)
	return fmt.Sprintf("# %d recipes, %d findings\n%s\n", recipes, len(fs), strings.Join(lines, "\n"))
}

// TestCorpusCounts pins the number of findings per kind and severity over
// the corpus in ../shared (11 recipes) and, when WLC_RECIPES_UPSTREAM names
// a checkout of the whole upstream repository at the commit the corpus
// comes from (vllm-project/recipes 8959cf6, 173 recipes), over that too:
// the counts the precision audit judged (issue 43). A rule change that
// moves a count has to be re-judged and the file rewritten
// (WLC_UPDATE=1).
func TestCorpusCounts(t *testing.T) {
	t.Run("shared", func(t *testing.T) {
		s := loadCorpus(t)
		testenv.Generated(t, "testdata/recipes/corpus_counts.txt", []byte(countsPerKind(Vet(s), len(s.Recipes))),
			"WLC_UPDATE=1 go test ./internal/recipes -run TestCorpusCounts")
	})
	// The whole upstream repository is an audit a developer opts into:
	// no registry serves it, so CI cannot have it, and a subtest that
	// always skipped there would read as a skip in CI.
	dir := os.Getenv("WLC_RECIPES_UPSTREAM")
	if dir == "" {
		return
	}
	t.Run("upstream", func(t *testing.T) {
		s, err := Load(cuecontext.New(), dir, dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Recipes) != 173 {
			t.Fatalf("%s has %d recipes; the pinned counts are for vllm-project/recipes 8959cf6 (173)", dir, len(s.Recipes))
		}
		testenv.Generated(t, "testdata/recipes/upstream_counts.txt", []byte(countsPerKind(Vet(s), len(s.Recipes))),
			"WLC_RECIPES_UPSTREAM=<checkout> WLC_UPDATE=1 go test ./internal/recipes -run TestCorpusCounts")
	})
}
