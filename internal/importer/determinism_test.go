package importer

import (
	"strings"
	"testing"
)

// TestSGLangBadArgsInArgvOrder: serve_args tokens whose values do not
// read are warned about and kept in extra_args in argv order, the same on
// every run (FuzzPerfEval found them in map order: two imports of one file
// differed).
func TestSGLangBadArgsInArgvOrder(t *testing.T) {
	yaml := "gpu: B300\nnum_gpus: 1\nsglang:\n  model: org/m\n  serve_args: --tp K --context-length L --max-running-requests M --chunked-prefill-size N\nbfcl: {test_categories: [simple_python]}\n"
	first := PerfEval("w.yaml", []byte(yaml))
	want := `extra_args: ["--tp", "K", "--context-length", "L", "--max-running-requests", "M", "--chunked-prefill-size", "N"]`
	if !strings.Contains(string(first.Source), want) {
		t.Fatalf("source lacks %s:\n%s", want, first.Source)
	}
	if f := findings(first); strings.Index(f, "--tp K:") > strings.Index(f, "--context-length L:") || strings.Index(f, "--max-running-requests M:") > strings.Index(f, "--chunked-prefill-size N:") {
		t.Errorf("warnings not in argv order:\n%s", f)
	}
	for range 30 {
		r := PerfEval("w.yaml", []byte(yaml))
		if findings(r) != findings(first) || string(r.Source) != string(first.Source) {
			t.Fatalf("two imports differ:\n%s%s\n---\n%s%s", findings(first), first.Source, findings(r), r.Source)
		}
	}
}
