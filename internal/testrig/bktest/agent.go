package bktest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// AgentBinary is looked up on PATH; .ci/setup.d/20-buildkite-agent.sh
// installs it.
const AgentBinary = "buildkite-agent"

// AgentVersion is the pinned agent. Tests assert its exact interpolation
// output, which other versions may change, so another version is treated as
// missing rather than silently used.
const AgentVersion = "3.78.0"

// DryRun runs the real `buildkite-agent pipeline upload --dry-run --format
// json` on pipelineYAML and returns the JSON the agent would upload, i.e.
// after its `$` interpolation. env is the agent's entire environment apart
// from a minimal PATH and a scratch HOME: no BUILDKITE_* variable leaks in
// from the machine running the tests. t fails unless the agent exits 0 and
// logs nothing at WARN level or above. A missing agent skips t locally and
// fails it in CI (testenv.Missing).
func DryRun(t testing.TB, pipelineYAML []byte, env map[string]string) []byte {
	t.Helper()
	agent := agentPath(t)
	out, err := RunDryRun(t.Context(), agent, pipelineYAML, env)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return out
}

// Agent is the real agent's path, for tests that run it as a job would
// (AgentAPI); a missing agent or another version skips t like DryRun.
func Agent(t testing.TB) string {
	t.Helper()
	return agentPath(t)
}

// DryRunError is a dry run that failed or warned.
type DryRunError struct {
	ExitCode int      // 0 when the agent succeeded but warned
	Problems []string // WARN/ERROR/fatal records from stderr, continuation lines included
	Stderr   string   // everything the agent logged
}

func (e *DryRunError) Error() string {
	var b strings.Builder
	if e.ExitCode != 0 {
		fmt.Fprintf(&b, "buildkite-agent pipeline upload --dry-run exited %d", e.ExitCode)
	} else {
		b.WriteString("buildkite-agent pipeline upload --dry-run succeeded but warned (the upload would proceed with a damaged pipeline)")
	}
	if len(e.Problems) == 0 {
		b.WriteString("; stderr:\n" + e.Stderr)
		return b.String()
	}
	for _, p := range e.Problems {
		b.WriteString("\n  " + strings.ReplaceAll(p, "\n", "\n    "))
	}
	return b.String()
}

// dryRunTimeout bounds one agent call (normally ~20 ms) so a hung agent
// fails the test instead of stalling the whole run.
const dryRunTimeout = time.Minute

// RunDryRun is DryRun returning an error (a *DryRunError for anything the
// agent reported) instead of failing a test, so tests can assert that a
// pipeline is rejected or warned about. agent is the binary's path.
func RunDryRun(ctx context.Context, agent string, pipelineYAML []byte, env map[string]string) ([]byte, error) {
	dir, err := os.MkdirTemp("", "bktest-dryrun-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	// A file rather than stdin: the agent decides whether to read stdin
	// with a heuristic, and a named file gives "pipeline.yml" in messages.
	file := filepath.Join(dir, "pipeline.yml")
	if err := os.WriteFile(file, pipelineYAML, 0o644); err != nil {
		return nil, err
	}

	ctx, cancel := context.WithTimeout(ctx, dryRunTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, agent, "pipeline", "upload",
		"--dry-run", "--format", "json", "--no-color", file)
	// The working directory matters only if BUILDKITE_COMMIT is set (the agent
	// then runs git rev-parse there); a scratch dir keeps the checkout out.
	cmd.Dir = dir
	cmd.Env = agentEnv(dir, env)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()

	problems := stderrProblems(stderr.String())
	if runErr != nil {
		var ee *exec.ExitError
		if !errors.As(runErr, &ee) {
			return nil, fmt.Errorf("running %s: %w", agent, runErr)
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s did not finish within %v: %w", agent, dryRunTimeout, ctx.Err())
		}
		return nil, &DryRunError{ExitCode: ee.ExitCode(), Problems: problems, Stderr: stderr.String()}
	}
	if len(problems) > 0 {
		return nil, &DryRunError{Problems: problems, Stderr: stderr.String()}
	}
	if stdout.Len() == 0 {
		return nil, fmt.Errorf("%s printed no pipeline; stderr:\n%s", agent, stderr.String())
	}
	return stdout.Bytes(), nil
}

func agentEnv(home string, env map[string]string) []string {
	base := map[string]string{
		// git is the only program the agent may run here (BUILDKITE_COMMIT).
		"PATH": "/usr/local/bin:/usr/bin:/bin",
		"HOME": home,
	}
	for k, v := range env {
		base[k] = v
	}
	out := make([]string, 0, len(base))
	for k, v := range base {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// logRecord matches the start of an agent log record:
// "2026-11-30 10:00:14 WARN   message". Levels: DEBUG INFO NOTICE WARN ERROR FATAL.
var logRecord = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d ([A-Z]+)\s+(.*)$`)

// wordWARN catches a WARN that does not come in the expected record format
// (a changed log layout must not make warnings invisible).
var wordWARN = regexp.MustCompile(`\bWARN(ING)?\b`)

// stderrProblems groups stderr into log records and returns those that are
// not routine: WARN and above, `fatal: ...` lines, and any line carrying the
// word WARN. Continuation lines (the agent's indented warning trees) stay
// with their record.
func stderrProblems(stderr string) []string {
	type record struct {
		level string
		text  []string
	}
	var recs []*record
	for _, line := range strings.Split(strings.TrimRight(stderr, "\n"), "\n") {
		if line == "" {
			continue
		}
		if m := logRecord.FindStringSubmatch(line); m != nil {
			recs = append(recs, &record{level: m[1], text: []string{m[1] + " " + m[2]}})
			continue
		}
		if strings.HasPrefix(line, "fatal:") || len(recs) == 0 {
			recs = append(recs, &record{level: "UNFORMATTED", text: []string{line}})
			continue
		}
		last := recs[len(recs)-1]
		last.text = append(last.text, line)
	}
	var out []string
	for _, r := range recs {
		text := strings.Join(r.text, "\n")
		switch r.level {
		case "DEBUG", "INFO", "NOTICE":
			if !wordWARN.MatchString(text) {
				continue
			}
		}
		out = append(out, text)
	}
	return out
}

var agentCheck struct {
	once    sync.Once
	path    string
	version string
	err     error
}

// agentPath finds the agent and checks its version once per test binary.
func agentPath(t testing.TB) string {
	t.Helper()
	agentCheck.once.Do(func() {
		p, err := exec.LookPath(AgentBinary)
		if err != nil {
			agentCheck.err = err
			return
		}
		agentCheck.path = p
		out, err := exec.Command(p, "--version").Output()
		if err != nil {
			agentCheck.err = fmt.Errorf("%s --version: %w", p, err)
			return
		}
		agentCheck.version = strings.TrimSpace(string(out))
	})
	switch {
	case agentCheck.path == "":
		testenv.Missing(t, AgentBinary+" not on PATH (run: bash .ci/setup.d/20-buildkite-agent.sh, then put $(go env GOPATH)/bin on PATH)")
	case agentCheck.err != nil:
		t.Fatalf("%v", agentCheck.err)
	case !versionIs(agentCheck.version, AgentVersion):
		testenv.Missing(t, fmt.Sprintf("%s is %q, want version %s (run: bash .ci/setup.d/20-buildkite-agent.sh)",
			agentCheck.path, agentCheck.version, AgentVersion))
	}
	return agentCheck.path
}

// versionIs accepts "buildkite-agent version 3.78.0" with or without the
// "+x..dirty" build suffix go install adds.
func versionIs(out, want string) bool {
	v, ok := strings.CutPrefix(out, "buildkite-agent version ")
	if !ok {
		return false
	}
	v, _, _ = strings.Cut(v, "+")
	return v == want
}
