package stub

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Build compiles the stubs into dir for a test and returns dir.
func Build(t testing.TB, dir string) string {
	t.Helper()
	if err := BuildDir(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// BuildDir compiles the stubs (vllm, vllm-router, sglang and the python3
// that runs it, lm_eval, bfcl, docker, nvidia-smi, rocm-smi) into dir with go build, and copies
// the Python stand-ins to dir/python (see Python); put dir first on PATH.
func BuildDir(dir string) error {
	_, file, _, _ := runtime.Caller(0)
	src := filepath.Dir(file)
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator),
		"./vllm", "./vllm-router", "./sglang", "./python3", "./lm_eval", "./bfcl", "./docker", "./nvidia-smi", "./rocm-smi")
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building the stubs: %v\n%s", err, out)
	}
	// A copy, so Python's caches land in dir and not in the checkout.
	return os.CopyFS(filepath.Join(dir, "python"), os.DirFS(filepath.Join(src, "python")))
}

// Python is the PYTHONPATH of an environment whose python3 has the
// given stub distributions (names of python/dists, e.g. "lm-eval") and
// the fake pip, which installs the others into site (put site on the
// path too; it may not exist yet). dir is BuildDir's directory.
func Python(dir, site string, dists ...string) string {
	parts := []string{filepath.Join(dir, "python")}
	for _, d := range dists {
		parts = append(parts, filepath.Join(dir, "python", "dists", d))
	}
	return strings.Join(append(parts, site), string(filepath.ListSeparator))
}
