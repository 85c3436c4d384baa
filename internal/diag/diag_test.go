package diag

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestString(t *testing.T) {
	for _, c := range []struct {
		d    Diagnostic
		want string
	}{
		{Diagnostic{Severity: Error, File: "workloads/a.cue", Line: 3, Column: 12, Path: "workloads.a", Message: "m"}, "workloads/a.cue:3:12: error: workloads.a: m"},
		{Diagnostic{Severity: Warning, File: "workloads/a.cue", Line: 1, Column: 1, Message: "m"}, "workloads/a.cue:1:1: warning: m"},
		{Diagnostic{Severity: Warning, File: "schema/x.cue", Message: "m"}, "schema/x.cue: warning: m"},
		{Diagnostic{Severity: Error, Message: "m"}, "wlc: error: m"},
		{Diagnostic{Severity: Error, Path: "p", Message: "m"}, "wlc: error: p: m"},
	} {
		if got := c.d.String(); got != c.want {
			t.Errorf("String() = %q, want %q", got, c.want)
		}
	}
}

func TestSortedOrdersAndDedupes(t *testing.T) {
	a := Diagnostic{Severity: Error, File: "a.cue", Line: 2, Column: 1, Path: "x", Message: "m"}
	b := Diagnostic{Severity: Error, File: "a.cue", Line: 10, Column: 1, Path: "x", Message: "m"}
	c := Diagnostic{Severity: Warning, File: "b.cue", Line: 1, Column: 1, Path: "y", Message: "m"}
	noFile := Diagnostic{Severity: Error, Message: "global"}
	in := List{c, b, a, noFile, a, b}
	got := in.Sorted()
	want := List{noFile, a, b, c}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Sorted (-want +got):\n%s", diff)
	}
	if len(in) != 6 || in[0] != c {
		t.Error("Sorted modified its receiver")
	}
}

func TestCountsAndPromote(t *testing.T) {
	l := List{{Severity: Warning, Message: "w"}, {Severity: Error, Message: "e"}, {Severity: Warning, Message: "w2"}}
	if l.Count(Warning) != 2 || l.Count(Error) != 1 || !l.HasErrors() {
		t.Fatalf("counts wrong: %d warnings, %d errors", l.Count(Warning), l.Count(Error))
	}
	p := l.Promote()
	if p.Count(Error) != 3 || p.Count(Warning) != 0 {
		t.Errorf("Promote left warnings: %v", p)
	}
	if l.Count(Warning) != 2 {
		t.Error("Promote modified its receiver")
	}
	if (List{{Severity: Warning}}).HasErrors() {
		t.Error("a warning is not an error")
	}
}

func TestWriteJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := List(nil).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != "[]\n" {
		t.Errorf("empty list = %q, want []", got)
	}
	buf.Reset()
	l := List{{Severity: Error, File: "a.cue", Line: 1, Column: 2, Path: "p", Message: "m"}}
	if err := l.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	want := `[
  {
    "severity": "error",
    "file": "a.cue",
    "line": 1,
    "column": 2,
    "path": "p",
    "message": "m"
  }
]
`
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("WriteJSON (-want +got):\n%s", diff)
	}
}

// TestLookalikeHint: a finding quoting a name typed with a look-alike
// letter says so, as text and as JSON, once however often it is printed
// or read back.
func TestLookalikeHint(t *testing.T) {
	d := Diagnostic{Severity: Error, File: "w.cue", Line: 4, Column: 17, Path: "workloads.w.profile", Message: "unknown profile Н200; known profiles: H200, B200"}
	want := "w.cue:4:17: error: workloads.w.profile: unknown profile Н200; known profiles: H200, B200 (Н200 only looks like H200: its Н is U+041D (Cyrillic), not the ASCII H; retype it)"
	if got := d.String(); got != want {
		t.Errorf("String:\n got %s\nwant %s", got, want)
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var back Diagnostic
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if got := back.String(); got != want {
		t.Errorf("read back from JSON:\n got %s\nwant %s", got, want)
	}
}
