package load

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wlcdev/wlc/internal/diag"
)

// unbalanced names the bracket to fix, where the indentation says it is.
func TestUnbalanced(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"a: {b: [1, 2], c: (1 + 2)}\n", ""},
		{"a: \"x \\(b) y\"\nb: 1\n", ""}, // an interpolation's parentheses are the string's
		{"a: {\n\tb: {\n\t\tc: 1\n\td: 2\n}\n", "the { at 2:5 is never closed: add its }"},
		{"a: {\n\tb: {c: 1\n}\n", "the { at 2:5 is never closed: add its }"},
		{"a: {\n\tb: 1\n", "the { at 1:4 is never closed: add its }"},
		{"a: [{b: 1}\n}\n", "the [ at 1:4 is closed by the } at 2:1: close it with ] first"},
		{"a: 1}\n", "the } at 1:5 closes nothing: remove it"},
	} {
		if got := unbalanced("f.cue", []byte(tc.src)); got != tc.want {
			t.Errorf("unbalanced(%q) = %q, want %q", tc.src, got, tc.want)
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
	files := newSources(dir)
	for _, d := range in {
		got = append(got, quoteHint(d, files))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("quoteHint (-want +got):\n%s", diff)
	}
}

// A bound CUE refused a value by reads in words, whichever bound it is.
func TestBoundHint(t *testing.T) {
	for _, tc := range []struct{ msg, want string }{
		{"invalid value 0 (out of bound >=1)", "must be at least 1, not 0"},
		{"invalid value 0 (out of bound >0)", "must be greater than 0, not 0"},
		{"invalid value 1.5 (out of bound <=1)", "must be at most 1, not 1.5"},
		{"invalid value 1 (out of bound <1)", "must be less than 1, not 1"},
		{`invalid value "" (out of bound !="")`, "must not be empty: give a value, or leave the field out"},
		{`invalid value "x" (out of bound !="x")`, `must not be "x"`},
		// A pattern is not a bound of order: left to the hints that know it.
		{`invalid value "a b" (out of bound =~"^[a-z]+$")`, `invalid value "a b" (out of bound =~"^[a-z]+$")`},
	} {
		if got := boundHint(diag.Diagnostic{Message: tc.msg}, nil); got != tc.want {
			t.Errorf("boundHint(%q) = %q, want %q", tc.msg, got, tc.want)
		}
	}
}

func TestFirstSentence(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"count is how many. More here.", "count is how many"},
		{`name is the task, e.g. "gsm8k". More.`, `name is the task, e.g. "gsm8k"`},
		{"one sentence only.", "one sentence only."},
		{"i.e. this. and that", "i.e. this"},
	} {
		if got := firstSentence(tc.in); got != tc.want {
			t.Errorf("firstSentence(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
