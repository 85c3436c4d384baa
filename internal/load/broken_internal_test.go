package load

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wlcdev/wlc/internal/diag"
)

// labels reads what a broken file may declare from its tokens, at any
// depth, whatever the parser made of the file.
func TestLabels(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want []string
	}{
		{"package workloads\nworkloads: a: {model: \"m\"\n", []string{"a", "model", "workloads"}},
		{"workloads: \"b-1\": {x?: 1, y!: int, \"z\": 2}", []string{"b-1", "workloads", "x", "y", "z"}},
		{"workloads: c: _base & {\n_helper: {p: 1}\nq: [a, b] // a: not a label\n", []string{"_helper", "c", "p", "q", "workloads"}},
		{"x: \"unterminated\ny: 1", []string{"x", "y"}},
		{"", nil},
	} {
		got := slices.Sorted(maps.Keys(labels("f.cue", []byte(tc.src))))
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("labels(%q) (-want +got):\n%s", tc.src, diff)
		}
	}
}

// A reference to nothing says what fixes it: quotes for a plain name
// written as a value or a list element, else its spelling.
func TestUnquotedStrings(t *testing.T) {
	dir := t.TempDir()
	src := "package workloads\n" +
		"workloads: a: {precision: bf16, lm_eval: tasks: [gsm8k]}\n" +
		"workloads: b: _base & {}\n" +
		"x: W={schema2.#Workload}\n"
	if err := os.WriteFile(filepath.Join(dir, "a.cue"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	at := func(line, col int, name string) diag.Diagnostic {
		return diag.Diagnostic{File: "a.cue", Line: line, Column: col, Message: `reference "` + name + `" not found`}
	}
	in := diag.List{
		at(2, 27, "bf16"),
		at(2, 50, "gsm8k"),
		at(3, 16, "_base"),
		at(4, 7, "schema2"),
		{Message: `reference "nowhere" not found`},
		{Message: `conflicting values 1 and 2`},
	}
	want := []string{
		`reference "bf16" not found; a string needs quotes: "bf16" (or declare bf16 in the package)`,
		`reference "gsm8k" not found; a string needs quotes: "gsm8k" (or declare gsm8k in the package)`,
		`reference "_base" not found: no file of the package declares _base; check its spelling`,
		`reference "schema2" not found: no file of the package declares schema2; check its spelling`,
		`reference "nowhere" not found: no file of the package declares nowhere; check its spelling`,
		`conflicting values 1 and 2`,
	}
	var got []string
	for _, d := range unquotedStrings(in, dir) {
		got = append(got, d.Message)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unquotedStrings (-want +got):\n%s", diff)
	}
}
