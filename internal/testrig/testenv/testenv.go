// Package testenv decides what a test does when an outside tool or the
// ../shared corpus is missing: skip with a one-line reason on a developer
// machine, fail in CI (CI=true), where .ci/run installs everything.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// InCI reports whether the tests run under .ci/run, where nothing may skip.
func InCI() bool { return os.Getenv("CI") == "true" }

// Missing skips the test with reason outside CI and fails it inside CI.
func Missing(t testing.TB, reason string) {
	t.Helper()
	if InCI() {
		t.Fatalf("CI must not skip: %s (.ci/run should install or start it)", reason)
	}
	t.Skip(reason)
}

// LookPath returns the path of tool or skips/fails the test when it is absent.
func LookPath(t testing.TB, tool string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		Missing(t, tool+" not on PATH (install it or run bash .ci/run)")
	}
	return p
}

// RepoRoot is the checkout root: the directory holding go.mod.
func RepoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate testenv source file")
	}
	// Walk up rather than count levels, so the package can move.
	for dir := filepath.Dir(file); ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		if filepath.Dir(dir) == dir {
			t.Fatal("no go.mod above " + file)
		}
	}
}

// SharedDir returns ../shared beside the checkout (or $WLC_SHARED), the
// read-only reference corpus. Tests that read it skip where it is absent.
func SharedDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("WLC_SHARED")
	if dir == "" {
		dir = filepath.Join(RepoRoot(t), "..", "shared")
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		Missing(t, "../shared (the reference corpus) is absent; set WLC_SHARED to its path")
	}
	return dir
}

// CopyFile copies the file from to the path to, making its directory.
func CopyFile(t testing.TB, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Generated holds the committed generated file at path (relative to the
// repository root) to got, the bytes its generator test computed: with
// WLC_UPDATE set it writes got there; otherwise it fails when they differ,
// naming the stale file and the command (regen) that rewrites it.
func Generated(t testing.TB, path string, got []byte, regen string) {
	t.Helper()
	path = filepath.Join(RepoRoot(t), filepath.FromSlash(path))
	if os.Getenv("WLC_UPDATE") != "" {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want, _ := os.ReadFile(path); string(want) != string(got) {
		t.Errorf("%s is stale; regenerate with %s", path, regen)
	}
}

// WriteFiles writes files (a slash-separated path under root → its
// content) under root, making the directories they need.
func WriteFiles(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
