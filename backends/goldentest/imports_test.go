package goldentest_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestOnlyTestsImportIt: the harness loads CUE and reads the filesystem,
// which backends must not; only tests and other test-support packages
// (named …test, like backends/runner/runnertest) may import it.
func TestOnlyTestsImportIt(t *testing.T) {
	const self = "github.com/wlcdev/wlc/backends/goldentest"
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "github.com/wlcdev/wlc/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		n++
		for _, imp := range fields[1:] {
			if imp == self && !strings.HasSuffix(fields[0], "test") {
				t.Errorf("%s imports %s; only tests and test-support packages may", fields[0], self)
			}
		}
	}
	if n < 20 {
		t.Fatalf("go list listed only %d packages:\n%s", n, out)
	}
}
