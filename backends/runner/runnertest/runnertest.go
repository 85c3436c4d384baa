// Package runnertest holds the test helpers the runner backends (docker,
// native, and the Slurm backend) share: a golden archive's plans (read by
// backends/goldentest), parsing with mvdan.cc/sh, shellcheck, and running
// a script with the stubs of internal/testrig/stub first on PATH.
package runnertest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/backends/goldentest"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// CheckScript is the runner backends' check of each golden artifact: the
// script parses with mvdan.cc/sh and passes shellcheck.
func CheckScript(t *testing.T, _ *goldentest.Case, a backends.Artifact) {
	t.Helper()
	Parse(t, a.Path, a.Data)
	Shellcheck(t, a.Path, a.Data)
}

// Parse parses a script with mvdan.cc/sh's bash parser.
func Parse(t testing.TB, name string, data []byte) *syntax.File {
	t.Helper()
	f, err := syntax.NewParser(syntax.KeepComments(true), syntax.Variant(syntax.LangBash)).Parse(bytes.NewReader(data), name)
	if err != nil {
		t.Fatalf("%s does not parse as bash: %v", name, err)
	}
	return f
}

// Shellcheck runs shellcheck on the script (skipped where shellcheck is
// absent, a failure under CI).
func Shellcheck(t testing.TB, name string, data []byte) {
	t.Helper()
	sc := testenv.LookPath(t, "shellcheck")
	p := filepath.Join(t.TempDir(), filepath.Base(name))
	if err := os.WriteFile(p, data, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(sc, "-s", "bash", "-f", "gcc", p).CombinedOutput()
	if err != nil {
		t.Errorf("shellcheck %s: %v\n%s", name, err, out)
	}
}

// Result is one script run.
type Result struct {
	Code   int
	Output string // stdout and stderr interleaved
	Took   time.Duration
}

// Run runs `bash script` in dir with env added to the current environment
// and a deadline; the script's process group is killed if it overruns.
func Run(t testing.TB, script, dir string, env []string, timeout time.Duration) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// Background helpers that keep the output pipe open must not hang the test.
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	res := Result{Output: out.String(), Took: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.Code = ee.ExitCode()
	default:
		t.Fatalf("running %s: %v\n%s", script, err, res.Output)
	}
	if ctx.Err() != nil {
		t.Fatalf("%s did not finish within %v:\n%s", script, timeout, res.Output)
	}
	return res
}

// Alive reports whether pid still runs (a zombie counts as gone).
func Alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// The state follows the parenthesized command name.
	s := string(data)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}
