package stub

import (
	"os"
	"path/filepath"
	"testing"
)

// Records reads the records Write renamed into place, never one still
// being written or left half-written by a killed stub (its dot-named
// temporary file: filepath.Glob's * matches a leading dot).
func TestRecordsSkipsUnfinished(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("WLC_STUB_LOG", dir)
	Write("vllm", "serve", nil)
	if err := os.WriteFile(filepath.Join(dir, ".vllm-serve-1-2.json"), []byte(`{"program": "vl`), 0o644); err != nil {
		t.Fatal(err)
	}
	rs, err := Records(dir)
	if err != nil {
		t.Fatalf("Records: %v", err)
	}
	if len(rs) != 1 || rs[0].Program != "vllm" || rs[0].Mode != "serve" {
		t.Fatalf("Records = %+v, want the one finished vllm serve record", rs)
	}
}
