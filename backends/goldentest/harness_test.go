package goldentest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/wlcdev/wlc/backends"
)

func TestCheckLayout(t *testing.T) {
	archive := func(names ...string) *txtar.Archive {
		a := &txtar.Archive{Comment: []byte("a case\n")}
		for _, n := range names {
			a.Files = append(a.Files, txtar.File{Name: n, Data: []byte("x\n")})
		}
		return a
	}
	for _, tc := range []struct {
		name    string
		archive *txtar.Archive
		wantErr string
	}{
		{"inputs and outputs", archive("cue.mod/module.cue", "workloads/a.cue", "out/a.sh", "out/b.sh"), ""},
		{"env first", archive("env", "cue.mod/module.cue", "workloads/a.cue", "out/pipeline.yml"), ""},
		{"no output yet", archive("cue.mod/module.cue", "workloads/a.cue"), ""},
		{"env later", archive("cue.mod/module.cue", "env", "workloads/a.cue"), `section "env": the layout has env (first, optional)`},
		{"another output prefix", archive("cue.mod/module.cue", "workloads/a.cue", "want/a.sbatch"), `section "want/a.sbatch"`},
		{"a bare output", archive("cue.mod/module.cue", "pipeline.yml"), `section "pipeline.yml"`},
		{"an empty artifact path", archive("workloads/a.cue", "out/"), `section "out/"`},
		{"input after output", archive("workloads/a.cue", "out/a.sh", "workloads/b.cue"), `section "workloads/b.cue" follows the out/ sections`},
		{"twice", archive("workloads/a.cue", "out/a.sh", "out/a.sh"), `section "out/a.sh" appears twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkLayout(tc.archive)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("got %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestMismatches(t *testing.T) {
	art := func(path, data string) backends.Artifact {
		return backends.Artifact{Path: path, Data: []byte(data)}
	}
	want := []backends.Artifact{art("a.sh", "one\ntwo\nthree\n"), art("b.sh", "four\n")}
	flipped := []backends.Artifact{art("a.sh", "one\ntwO\nthree\n"), want[1]}
	for _, tc := range []struct {
		name  string
		got   []backends.Artifact
		view  func([]byte) []byte
		wants []string // one substring per expected message
	}{
		{"same", want, nil, nil},
		{"one byte", flipped, nil, []string{"out/a.sh differs from the lowering:\ndiff out/a.sh lowered\n--- out/a.sh\n+++ lowered\n@@ -1,3 +1,3 @@\n one\n-two\n+twO\n three\n"}},
		{"through the view", flipped, func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("o"), []byte("0")) }, []string{"-tw0\n+twO\n"}},
		{"a view that hides it", flipped, bytes.ToUpper, []string{"-two\n+twO\n"}},
		{"order", []backends.Artifact{want[1], want[0]}, nil, []string{"the lowering gives the artifacts [b.sh a.sh], the archive's out/ sections are [a.sh b.sh]"}},
		{"missing", want[:1], nil, []string{"the lowering gives the artifacts [a.sh], the archive's out/ sections are [a.sh b.sh]"}},
		{"new", append(append([]backends.Artifact{}, want...), art("c.sh", "five\n")), nil, []string{"the lowering gives the artifacts [a.sh b.sh c.sh]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms := mismatches(want, tc.got, tc.view)
			if len(ms) != len(tc.wants) {
				t.Fatalf("%d mismatches, want %d:\n%s", len(ms), len(tc.wants), strings.Join(ms, "\n"))
			}
			for i, w := range tc.wants {
				if !strings.Contains(ms[i], w) {
					t.Errorf("mismatch %q lacks %q", ms[i], w)
				}
			}
		})
	}
}
