package load

import (
	"os"
	"path/filepath"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/parser"
	"github.com/google/go-cmp/cmp"

	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// TestLabelIndex: the index progress reads gives, for every two-label
// path, the label labelPos finds (the first in files, declarations,
// embeddings, & and parentheses order), on the bundled workloads and on
// files that declare a workload in every way findLabel reaches, more
// than once.
func TestLabelIndex(t *testing.T) {
	parse := func(name, src string) *ast.File {
		f, err := parser.ParseFile(name, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	crafted := []*ast.File{
		parse("a.cue", `package workloads

{workloads: embedded: {model: "m"}}
workloads: ({anded: {}} & {plain: {}, anded: {}})
workloads: {
	{inner: {}}
	"quoted name": {}
	plain: {}
}
(profiles): {dyn: {}}
profiles: H200: {}
`),
		parse("b.cue", `package workloads

workloads: embedded: {}
workloads: later: {}
profiles: {H200: {}, B200: {}}
`),
	}
	repo := testenv.RepoRoot(t)
	names, err := filepath.Glob(filepath.Join(repo, "workloads", "*.cue"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no bundled workload files: %v", err)
	}
	var bundled []*ast.File
	for _, n := range names {
		src, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		bundled = append(bundled, parse(n, string(src)))
	}
	for _, c := range []struct {
		name  string
		files []*ast.File
		want  int // paths at least
	}{{"crafted", crafted, 8}, {"bundled", bundled, 20}} {
		t.Run(c.name, func(t *testing.T) {
			idx := labelIndex(c.files)
			if len(idx) < c.want {
				t.Fatalf("%d paths indexed, want at least %d: %v", len(idx), c.want, idx)
			}
			l := &loader{files: c.files}
			for k, pos := range idx {
				want := l.labelPos([]cue.Selector{cue.Str(k[0]), cue.Str(k[1])})
				if pos != want {
					t.Errorf("%s.%s: index %v, labelPos %v", k[0], k[1], pos, want)
				}
			}
			for _, k := range [][2]string{{"workloads", "absent"}, {"absent", "plain"}, {"model", "m"}, {"profiles", "dyn"}} {
				if p := l.labelPos([]cue.Selector{cue.Str(k[0]), cue.Str(k[1])}); p.IsValid() || idx[k].IsValid() {
					t.Errorf("%s.%s: labelPos %v, index %v; want neither", k[0], k[1], p, idx[k])
				}
			}
		})
	}
	// labelIndex and labelPos walk with one eachField, so the crafted
	// files' index is also held to positions read off their text.
	idx := labelIndex(crafted)
	want := map[[2]string]string{
		{"workloads", "embedded"}:    "a.cue:3:13", // the first declaration wins, not b.cue's
		{"workloads", "anded"}:       "a.cue:4:14", // the left side of &
		{"workloads", "plain"}:       "a.cue:4:28",
		{"workloads", "inner"}:       "a.cue:6:3",
		{"workloads", "quoted name"}: "a.cue:7:2",
		{"profiles", "H200"}:         "a.cue:11:11",
		{"workloads", "later"}:       "b.cue:4:12",
		{"profiles", "B200"}:         "b.cue:5:22",
	}
	got := map[[2]string]string{}
	for k, p := range idx {
		got[k] = p.String()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("crafted index (-want +got):\n%s", diff)
	}
}
