package load

import (
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
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
