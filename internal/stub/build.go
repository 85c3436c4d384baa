package stub

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Build compiles the stubs (vllm, lm_eval, bfcl, docker) into dir with
// go build and returns dir, ready to go first on PATH.
func Build(t testing.TB, dir string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Dir(file)
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator),
		"./vllm", "./lm_eval", "./bfcl", "./docker")
	cmd.Dir = root
	cmd.Env = os.Environ()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the stubs: %v\n%s", err, out)
	}
	return dir
}
