package load_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLoadImportsNoBackend: dependencies point one way (load → plan →
// backends); backends' vet-time rules reach the loader as Vetters.
func TestLoadImportsNoBackend(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/wlcdev/wlc/internal/load").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	n := 0
	for _, pkg := range strings.Fields(string(out)) {
		n++
		if strings.HasPrefix(pkg, "github.com/wlcdev/wlc/backends") {
			t.Errorf("internal/load depends on %s; pass backend rules in as load.Vetter instead", pkg)
		}
	}
	if n < 10 {
		t.Fatalf("go list -deps listed only %d packages:\n%s", n, out)
	}
}
