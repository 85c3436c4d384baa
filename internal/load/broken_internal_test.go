package load

import (
	"maps"
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

// A reference to nothing says what fixes it: quotes for a plain name, the
// spelling of a helper or definition.
func TestUnquotedStrings(t *testing.T) {
	in := diag.List{
		{Message: `reference "bf16" not found`},
		{Message: `reference "_base" not found`},
		{Message: `reference "#Llama" not found`},
		{Message: `conflicting values 1 and 2`},
	}
	want := []string{
		`reference "bf16" not found; a string needs quotes: "bf16" (or declare bf16 in the package)`,
		`reference "_base" not found: no file of the package declares _base; check its spelling`,
		`reference "#Llama" not found: no file of the package declares #Llama; check its spelling`,
		`conflicting values 1 and 2`,
	}
	var got []string
	for _, d := range unquotedStrings(in) {
		got = append(got, d.Message)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unquotedStrings (-want +got):\n%s", diff)
	}
}
