package atomicdir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplaceRefusesWhatTheMarkerDoesNotList: a directory holding a
// previous export's marker is replaced only if the marker lists every file
// in it; anything else (a user's file beside the set or among its
// subdirectories, an empty directory, a symlink or directory where a
// listed file was, a marker that is not a marker) refuses the whole
// replacement, names the first such entry, and changes nothing.
func TestReplaceRefusesWhatTheMarkerDoesNotList(t *testing.T) {
	prev := []File{{Path: "a.sh", Data: []byte("A")}, {Path: "scripts/b.sh", Data: []byte("B")}, {Path: "deep/er/c.sh", Data: []byte("C")}}
	next := []File{{Path: "a.sh", Data: []byte("A2")}}
	for _, tc := range []struct {
		name  string
		alter func(out string) error
		want  string // "" = replaced
	}{
		{"the previous set as written", func(string) error { return nil }, ""},
		{"a listed file removed", func(out string) error { return os.Remove(filepath.Join(out, "a.sh")) }, ""},
		{"a listed file edited", func(out string) error { return os.WriteFile(filepath.Join(out, "a.sh"), []byte("edited"), 0o644) }, ""},
		{"a user's file beside the set", func(out string) error { return os.WriteFile(filepath.Join(out, "notes.txt"), []byte("mine"), 0o644) },
			"out/notes.txt was not written by wlc export (.wlc-export lists the files of the export it replaces, and not this file); each export replaces the whole directory, so move it out of out or choose a new or empty directory"},
		{"a user's file in a set's subdirectory", func(out string) error {
			return os.WriteFile(filepath.Join(out, "scripts", "mine.sh"), []byte("mine"), 0o644)
		}, "out/scripts/mine.sh was not written by wlc export (.wlc-export lists the files of the export it replaces, and not this file)"},
		{"a user's file deep down", func(out string) error { return os.WriteFile(filepath.Join(out, "deep", "x"), nil, 0o644) }, "out/deep/x was not written"},
		{"an empty directory", func(out string) error { return os.Mkdir(filepath.Join(out, "results"), 0o755) }, "out/results was not written by wlc export (.wlc-export lists the files of the export it replaces, and not this directory)"},
		{"a directory where a listed file was", func(out string) error {
			os.Remove(filepath.Join(out, "a.sh"))
			return os.Mkdir(filepath.Join(out, "a.sh"), 0o755)
		}, "out/a.sh was not written by wlc export (.wlc-export lists the files of the export it replaces, and not this directory)"},
		{"a symlink where a listed file was", func(out string) error {
			os.Remove(filepath.Join(out, "a.sh"))
			return os.Symlink("/etc/passwd", filepath.Join(out, "a.sh"))
		}, "out/a.sh was not written by wlc export (.wlc-export lists the files of the export it replaces, and not this symbolic link)"},
		{"a marker listing the user's file", func(out string) error {
			os.WriteFile(filepath.Join(out, "../x"), nil, 0o644)
			f, _ := os.OpenFile(filepath.Join(out, Marker), os.O_APPEND|os.O_WRONLY, 0)
			defer f.Close()
			_, err := f.WriteString("../x\n/etc/passwd\n")
			return err
		}, ""}, // the listed paths outside are ignored, nothing outside is touched
		{"a marker that is a directory", func(out string) error {
			os.Remove(filepath.Join(out, Marker))
			return os.Mkdir(filepath.Join(out, Marker), 0o755)
		}, "out/.wlc-export: not a regular file, so not a marker wlc wrote"},
		{"a marker that is a symlink", func(out string) error {
			os.Remove(filepath.Join(out, Marker))
			return os.Symlink("/etc/passwd", filepath.Join(out, Marker))
		}, "out/.wlc-export: not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			out := filepath.Join(parent, "out")
			if _, err := Replace(out, "# h", prev); err != nil {
				t.Fatal(err)
			}
			if err := tc.alter(out); err != nil {
				t.Fatal(err)
			}
			before := tree(t, out)
			wd, _ := os.Getwd()
			os.Chdir(parent)
			defer os.Chdir(wd)
			_, err := Replace("out", "# h", next)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if got := tree(t, out); len(got) != 2 || got["a.sh"] != "A2" {
					t.Errorf("out holds %v", got)
				}
				if _, err := os.Stat(filepath.Join(parent, "x")); tc.name == "a marker listing the user's file" && err != nil {
					t.Errorf("a file outside out went: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v\nwant one containing %q", err, tc.want)
			}
			if after := tree(t, out); len(after) != len(before) {
				t.Errorf("out changed: %v, was %v", after, before)
			}
			if n := names(t, parent); len(n) != 1 && !(len(n) == 2 && n[1] == "x") {
				t.Errorf("left beside out: %v", n)
			}
		})
	}
}
