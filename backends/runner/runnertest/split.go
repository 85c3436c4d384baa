package runnertest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/backends/goldentest"
	"github.com/wlcdev/wlc/backends/runner"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// SplitDir is where CheckSplit puts the runtime, relative to the script
// (as the Buildkite export does: scripts/ and helpers/ side by side).
const SplitDir = "../helpers"

// CheckSplit is the runner backends' check of each golden case: every
// workload's split script (runner.Splitter), with the shared runtime file
// (without its runner.RuntimeHeader) inlined at its source line, is byte
// for byte the self-contained script the backend wrote, so both run the
// same; the runtime holds nothing of the workload (its name, model or job
// hash); the job's part parses, and each runtime, alone and with the first
// job script sourcing it, passes shellcheck.
func CheckSplit(s runner.Splitter) func(*testing.T, *goldentest.Case, []backends.Artifact) {
	return func(t *testing.T, c *goldentest.Case, arts []backends.Artifact) {
		t.Helper()
		checked := map[string]bool{}
		for i, w := range c.Plans {
			whole := arts[i]
			if whole.Path != w.Name+".sh" {
				t.Fatalf("artifact %d is %s, want %s.sh", i, whole.Path, w.Name)
			}
			sp, err := s.Split(w, SplitDir)
			if err != nil {
				t.Fatalf("%s: Split: %v", w.Name, err)
			}
			if got := Inline(t, sp); !bytes.Equal(got, whole.Data) {
				t.Errorf("%s: the split script with its runtime inlined differs from the self-contained script", w.Name)
			}
			if sp.Runtime == nil {
				continue
			}
			// Shared by many workloads, it holds nothing of one.
			hash, err := plan.JobHash(w)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range []string{w.Name, w.Model, hash} {
				if bytes.Contains(sp.Runtime.Data, []byte(v)) {
					t.Errorf("%s: the shared runtime %s holds the workload's %q", w.Name, sp.Runtime.Name, v)
				}
			}
			Parse(t, whole.Path, sp.Job)
			// The whole script passed shellcheck (CheckScript); once per
			// runtime, the files as shipped must too.
			if !checked[sp.Runtime.Name] {
				checked[sp.Runtime.Name] = true
				CheckScript(t, c, backends.Artifact{Path: sp.Runtime.Name, Data: sp.Runtime.Data})
				ShellcheckSplit(t, whole.Path, sp)
			}
		}
	}
}

// Inline is the split's job script with the runtime inlined at its source
// line (the only one), as one self-contained script.
func Inline(t testing.TB, sp runner.Split) []byte {
	t.Helper()
	if sp.Runtime == nil {
		if SourcedRuntime(t, sp.Job) != "" {
			t.Fatalf("a job script without a runtime sources one:\n%s", sp.Job)
		}
		return sp.Job
	}
	if got, want := SourcedRuntime(t, sp.Job), SplitDir+"/"+sp.Runtime.Name; got != want {
		t.Fatalf("the job script sources %q, want %q", got, want)
	}
	return inline(t, sp.Job, SplitDir+"/"+sp.Runtime.Name, sp.Runtime.Data)
}

// InlineFile is the job script at path with the runtime it sources, read
// from where it says (relative to path's directory), inlined at its source
// line: what ran, as one script.
func InlineFile(t testing.TB, path string) []byte {
	t.Helper()
	job, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rel := SourcedRuntime(t, job)
	if rel == "" {
		return job
	}
	rt, err := os.ReadFile(filepath.Join(filepath.Dir(path), filepath.FromSlash(rel)))
	if err != nil {
		t.Fatalf("%s sources %s: %v", path, rel, err)
	}
	return inline(t, job, rel, rt)
}

// sourceLine matches runner.SourceLine's command.
var sourceLine = regexp.MustCompile(`(?m)^\. "\$\(dirname -- "\$\{BASH_SOURCE\[0\]\}"\)"/(.*)$`)

// SourcedRuntime is the path, relative to the script's directory, of the
// runtime a job script sources ("" when it stands alone); a script
// sourcing more than one fails the test.
func SourcedRuntime(t testing.TB, job []byte) string {
	t.Helper()
	m := sourceLine.FindAllSubmatch(job, -1)
	switch len(m) {
	case 0:
		return ""
	case 1:
		return string(m[0][1])
	}
	t.Fatalf("the job script sources %d files, want at most one runtime", len(m))
	return ""
}

func inline(t testing.TB, job []byte, rel string, runtime []byte) []byte {
	t.Helper()
	line, err := runner.SourceLine(rel)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(job, []byte(line)); n != 1 {
		t.Fatalf("the job script has runner.SourceLine(%q) %d times, want once:\n%s", rel, n, job)
	}
	text, ok := bytes.CutPrefix(runtime, []byte(runner.RuntimeHeader))
	if !ok {
		t.Fatalf("%s does not start with runner.RuntimeHeader", rel)
	}
	return bytes.Replace(job, []byte(line), text, 1)
}

// ShellcheckSplit runs `shellcheck -x` on the split's job script, laid out
// as SplitDir says, so that shellcheck follows its source line into the
// runtime and checks the two as the one script they are.
func ShellcheckSplit(t testing.TB, name string, sp runner.Split) {
	t.Helper()
	sc := testenv.LookPath(t, "shellcheck")
	dir := t.TempDir()
	job := filepath.Join(dir, "scripts", filepath.Base(name))
	rt := filepath.Join(dir, "scripts", filepath.FromSlash(SplitDir), sp.Runtime.Name)
	for p, data := range map[string][]byte{job: sp.Job, rt: sp.Runtime.Data} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command(sc, "-x", "-s", "bash", "-f", "gcc", job).CombinedOutput(); err != nil {
		t.Errorf("shellcheck -x %s (with %s): %v\n%s", name, sp.Runtime.Name, err, out)
	}
}
