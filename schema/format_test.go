package schema_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"cuelang.org/go/cue/format"

	"github.com/wlcdev/wlc/schema"
)

// TestFormatted keeps the schema and the bundled workloads as `cue fmt`
// writes them (the cue version go.mod pins), so `cue fmt --check` stays
// quiet and a reader's diff is never a reformat.
func TestFormatted(t *testing.T) {
	check := func(name string, src []byte) {
		t.Helper()
		got, err := format.Source(src)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			return
		}
		if !bytes.Equal(got, src) {
			t.Errorf("%s is not as cue fmt writes it; run `cue fmt %s`", name, name)
		}
	}
	err := fs.WalkDir(schema.Files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		src, err := fs.ReadFile(schema.Files, p)
		if err == nil {
			check(filepath.Join("schema", p), src)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, glob := range []string{"recipe/*.cue", "../workloads/*.cue"} {
		files, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatalf("no files match %s", glob)
		}
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			check(filepath.Clean(filepath.Join("schema", f)), src)
		}
	}
}
