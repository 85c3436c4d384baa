package slurm_test

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/backends/goldentest"
	"github.com/wlcdev/wlc/backends/runner/runnertest"
	"github.com/wlcdev/wlc/backends/slurm"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// TestGolden is the backends' golden test (backends/goldentest); every
// script parses with mvdan.cc/sh, passes shellcheck and keeps its #SBATCH
// directives where sbatch reads them.
func TestGolden(t *testing.T) {
	goldentest.Run(t, slurm.New(), goldentest.Checks{
		Mode: 0o755,
		Artifact: func(t *testing.T, c *goldentest.Case, a backends.Artifact) {
			runnertest.CheckScript(t, c, a)
			checkDirectives(t, a)
		},
	})
}

// checkDirectives: sbatch reads #SBATCH lines only up to the script's
// first command, so every directive must precede it; the job is named
// after its script.
func checkDirectives(t *testing.T, a backends.Artifact) {
	t.Helper()
	var header, named bool
	inHeader := true
	sc := bufio.NewScanner(bytes.NewReader(a.Data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "#SBATCH"):
			if !inHeader {
				t.Errorf("%s:%d: %q follows the first command; sbatch ignores it", a.Path, n, line)
			}
			header = true
			named = named || line == "#SBATCH --job-name="+strings.TrimSuffix(a.Path, ".sbatch")
		case strings.TrimSpace(line) != "" && !strings.HasPrefix(line, "#"):
			inHeader = false
		}
	}
	if !header {
		t.Errorf("%s has no #SBATCH directive", a.Path)
	}
	if !named {
		t.Errorf("%s has no #SBATCH --job-name=%s", a.Path, strings.TrimSuffix(a.Path, ".sbatch"))
	}
}

// goldenPlan is the one workload of testdata/backends/slurm/<name>.txtar.
func goldenPlan(t *testing.T, name string) plan.Workload {
	t.Helper()
	archive := filepath.Join(testenv.RepoRoot(t), "testdata", "backends", "slurm", name+".txtar")
	ws := goldentest.Open(t, archive, slurm.New()).Plans
	if len(ws) != 1 {
		t.Fatalf("%s: %d workloads, want 1", archive, len(ws))
	}
	return ws[0]
}

// scripts lowers every golden archive into one directory: name -> path.
// scriptJobHash is the job hash the golden's sbatch script name exports.
func scriptJobHash(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(scripts(t)[name])
	if err != nil {
		t.Fatal(err)
	}
	return runnertest.ScriptJobHash(t, string(data))
}

func scripts(t *testing.T) map[string]string {
	t.Helper()
	out := t.TempDir()
	m := map[string]string{}
	for _, archive := range goldentest.Archives(t, "slurm") {
		for _, a := range goldentest.Open(t, archive, slurm.New()).Lower(t, slurm.New()) {
			p := filepath.Join(out, a.Path)
			if err := os.WriteFile(p, a.Data, a.Mode); err != nil {
				t.Fatal(err)
			}
			m[strings.TrimSuffix(a.Path, ".sbatch")] = p
		}
	}
	return m
}
