package atomicdir

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// tree reads every file under dir as path → content.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		m[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n []string
	for _, e := range ents {
		n = append(n, e.Name())
	}
	sort.Strings(n)
	return n
}

func TestReplaceNewThenExisting(t *testing.T) {
	parent := t.TempDir()
	out := filepath.Join(parent, "out")
	if _, err := Replace(out, "# h", []File{{Path: "a.sh", Data: []byte("A"), Mode: 0o755}, {Path: "sub/b.yml", Data: []byte("B")}}); err != nil {
		t.Fatal(err)
	}
	got := tree(t, out)
	if got["a.sh"] != "A" || got["sub/b.yml"] != "B" || len(got) != 3 {
		t.Fatalf("first set: %v", got)
	}
	if !strings.HasPrefix(got[Marker], "# h\n") || !strings.Contains(got[Marker], "\na.sh\nsub/b.yml\n") {
		t.Errorf("marker: %q", got[Marker])
	}
	if fi, _ := os.Stat(filepath.Join(out, "a.sh")); fi.Mode().Perm() != 0o755 {
		t.Errorf("a.sh mode %v, want 0755", fi.Mode())
	}
	os.Chmod(out, 0o750)
	if _, err := Replace(out, "# h", []File{{Path: "c.sh", Data: []byte("C")}}); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, out); got["c.sh"] != "C" || len(got) != 2 {
		t.Fatalf("second set replaces the first whole: %v", got)
	}
	if fi, _ := os.Stat(out); fi.Mode().Perm() != 0o750 {
		t.Errorf("directory mode %v, want the previous 0750 kept", fi.Mode())
	}
	if n := names(t, parent); len(n) != 1 || n[0] != "out" {
		t.Errorf("beside out: %v, want nothing else", n)
	}
}

func TestReplaceRefusesForeignDirectory(t *testing.T) {
	out := t.TempDir()
	os.WriteFile(filepath.Join(out, "notes.txt"), []byte("mine"), 0o644)
	_, err := Replace(out, "# h", []File{{Path: "a.sh", Data: []byte("A")}})
	if err == nil || !strings.Contains(err.Error(), "holds files wlc export did not write (notes.txt)") {
		t.Fatalf("err = %v", err)
	}
	if got := tree(t, out); len(got) != 1 || got["notes.txt"] != "mine" {
		t.Errorf("out changed: %v", got)
	}
	if n := names(t, filepath.Dir(out)); len(n) != 1 {
		t.Errorf("left beside out: %v", n)
	}
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o644)
	if _, err := Replace(f, "# h", nil); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("a file as output: %v", err)
	}
}

// A failure while staging leaves the previous set and no staging directory.
func TestReplaceFailureLeavesPrevious(t *testing.T) {
	parent := t.TempDir()
	out := filepath.Join(parent, "out")
	if _, err := Replace(out, "# h", []File{{Path: "a.sh", Data: []byte("A")}}); err != nil {
		t.Fatal(err)
	}
	before := tree(t, out)
	// "x" as a file and as a directory: staging x/y fails after x.
	_, err := Replace(out, "# h", []File{{Path: "x", Data: []byte("1")}, {Path: "x/y", Data: []byte("2")}})
	if err == nil {
		t.Fatal("no error")
	}
	if got := tree(t, out); len(got) != len(before) || got["a.sh"] != "A" {
		t.Errorf("out changed: %v", got)
	}
	if n := names(t, parent); len(n) != 1 {
		t.Errorf("left beside out: %v", n)
	}
}

func TestReplaceSweepsKilledStage(t *testing.T) {
	parent := t.TempDir()
	out := filepath.Join(parent, "out")
	os.MkdirAll(filepath.Join(parent, ".out.wlc-stage-dead", "half"), 0o755)
	os.MkdirAll(filepath.Join(parent, ".other.wlc-stage-live"), 0o755) // another target's: kept
	if _, err := Replace(out, "# h", []File{{Path: "a", Data: []byte("A")}}); err != nil {
		t.Fatal(err)
	}
	if n := names(t, parent); strings.Join(n, " ") != ".other.wlc-stage-live out" {
		t.Errorf("beside out: %v", n)
	}
}

func TestReplaceFollowsSymlink(t *testing.T) {
	parent := t.TempDir()
	real := filepath.Join(parent, "v1")
	link := filepath.Join(parent, "out")
	os.Mkdir(real, 0o755)
	os.Symlink("v1", link)
	if _, err := Replace(link, "# h", []File{{Path: "a", Data: []byte("A")}}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi, err)
	}
	if got := tree(t, real); got["a"] != "A" {
		t.Errorf("target: %v", got)
	}
}

func TestReplaceRefusesUnsafePaths(t *testing.T) {
	for _, p := range []string{"../x", "/abs", "a/../../b", "", Marker, "a//b"} {
		if _, err := Replace(filepath.Join(t.TempDir(), "o"), "# h", []File{{Path: p}}); err == nil {
			t.Errorf("%q accepted", p)
		}
	}
}

func TestPlaceKeepsOtherFilesAndRollsBack(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "keep.cue"), []byte("user"), 0o644)
	os.WriteFile(filepath.Join(dir, "a.cue"), []byte("old a"), 0o644)
	os.Mkdir(filepath.Join(dir, "d"), 0o755)
	// b.cue replaces nothing, a.cue replaces "old a", then d fails (a directory).
	err := Place(dir, []File{{Path: "b.cue", Data: []byte("b")}, {Path: "a.cue", Data: []byte("new a")}, {Path: "n/c.cue", Data: []byte("c")}, {Path: "d", Data: []byte("x")}})
	if err == nil || !strings.Contains(err.Error(), "nothing was written") {
		t.Fatalf("err = %v", err)
	}
	got := tree(t, dir)
	want := map[string]string{"keep.cue": "user", "a.cue": "old a"}
	if len(got) != len(want) || got["keep.cue"] != "user" || got["a.cue"] != "old a" {
		t.Errorf("after the failed place: %v, want %v", got, want)
	}
	if n := names(t, dir); strings.Join(n, " ") != "a.cue d keep.cue" {
		t.Errorf("entries: %v", n)
	}
	if err := Place(dir, []File{{Path: "a.cue", Data: []byte("new a")}, {Path: "n/c.cue", Data: []byte("c")}}); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, dir); got["a.cue"] != "new a" || got["n/c.cue"] != "c" || got["keep.cue"] != "user" || len(got) != 3 {
		t.Errorf("after place: %v", got)
	}
}
