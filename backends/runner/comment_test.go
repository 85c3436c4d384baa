package runner

import (
	"strings"
	"testing"
)

// FuzzCommentLines: the header's comment writer gives what the plain
// formula gives for every line: "# " + Comment(line), trailing blanks
// trimmed, whatever the text (control characters, U+2028, invalid UTF-8).
func FuzzCommentLines(f *testing.F) {
	for _, s := range []string{"", "\n", "\n\n", "Model:      Qwen/Qwen3-8B", "trailing   ", "a\rb\tc\x00d", "line\u2028sep\u2029x", "\xff\xfe bad utf8 \xc3", "  \n  x  \n", " ", "x\n \n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want strings.Builder
		for _, l := range strings.Split(s, "\n") {
			want.WriteString(strings.TrimRight("# "+Comment(l), " ") + "\n")
		}
		if got := string(appendCommentLines(nil, s)); got != want.String() {
			t.Fatalf("appendCommentLines(%q) = %q, want %q", s, got, want.String())
		}
	})
}
