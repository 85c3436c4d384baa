package docker_test

import (
	"path/filepath"
	"testing"

	"github.com/wlcdev/wlc/backends/docker"
	"github.com/wlcdev/wlc/backends/runner/runnertest"
	"github.com/wlcdev/wlc/internal/testenv"
)

func archives(t *testing.T) []string {
	t.Helper()
	as, err := filepath.Glob(filepath.Join(testenv.RepoRoot(t), "testdata", "backends", "docker", "*.txtar"))
	if err != nil || len(as) == 0 {
		t.Fatalf("no golden archives: %v", err)
	}
	return as
}

// TestGolden compares every archive's lowering with its out/ sections
// (byte-identical across two lowerings), parses each script with
// mvdan.cc/sh and runs shellcheck on it.
func TestGolden(t *testing.T) {
	for _, a := range archives(t) {
		t.Run(filepath.Base(a), func(t *testing.T) {
			t.Parallel()
			for _, art := range runnertest.Golden(t, docker.Backend{}, a) {
				if art.Mode != 0o755 {
					t.Errorf("%s: mode %v, want 0755", art.Path, art.Mode)
				}
				runnertest.Parse(t, art.Path, art.Data)
				runnertest.Shellcheck(t, art.Path, art.Data)
			}
		})
	}
}
