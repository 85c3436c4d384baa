package stub

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
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

// BuildDir compiles the stubs (vllm, sglang and the python3 that runs it,
// lm_eval, bfcl, docker) into dir with go build; put dir first on PATH.
func BuildDir(dir string) error {
	_, file, _, _ := runtime.Caller(0)
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator),
		"./vllm", "./vllm-router", "./sglang", "./python3", "./lm_eval", "./bfcl", "./docker")
	cmd.Dir = filepath.Dir(file)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building the stubs: %v\n%s", err, out)
	}
	return nil
}
