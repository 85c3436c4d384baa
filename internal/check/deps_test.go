package check_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestPure: the rules are functions of decoded values. The package
// imports no CUE and nothing that reaches the filesystem; what CUE its
// dependencies bring is only the schema package's (the Go mirror also
// builds the embedded schema for its other users), never evaluated here.
func TestPure(t *testing.T) {
	list := func(args ...string) []string {
		out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
		if err != nil {
			t.Fatalf("go list %v: %v", args, err)
		}
		return strings.Fields(string(out))
	}
	imports := list("-f", `{{join .Imports " "}}`, "github.com/wlcdev/wlc/internal/check")
	if len(imports) < 3 {
		t.Fatalf("go list found only %v", imports)
	}
	for _, p := range imports {
		if strings.HasPrefix(p, "cuelang.org/") || slices.Contains([]string{"os", "os/exec", "io/fs", "io/ioutil", "path/filepath", "embed"}, p) {
			t.Errorf("internal/check imports %s; the rules read decoded values only (the loader evaluates and positions)", p)
		}
	}
	fromSchema := list("-deps", "github.com/wlcdev/wlc/schema")
	for _, p := range list("-deps", "github.com/wlcdev/wlc/internal/check") {
		if strings.HasPrefix(p, "cuelang.org/") && !slices.Contains(fromSchema, p) {
			t.Errorf("internal/check depends on %s beyond what the schema package brings", p)
		}
	}
}
