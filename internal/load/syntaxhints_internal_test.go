package load

import "testing"

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
