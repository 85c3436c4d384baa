package ingesttest

import (
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// TestAgentSecret: the real buildkite-agent's `secret get` reads the token
// from the stand-in Agent API and registers it with the Job API.
func TestAgentSecret(t *testing.T) {
	testenv.LookPath(t, "buildkite-agent")
	s := New(t, "tok-123")
	cmd := exec.Command("buildkite-agent", "secret", "get", "INGEST_BEARER_TOKEN")
	cmd.Env = append(append(os.Environ(), s.AgentEnv()...), "BUILDKITE_JOB_ID=job-9")
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != "tok-123\n" {
		t.Fatalf("buildkite-agent secret get: %v %q", err, out)
	}
	cmd = exec.Command("buildkite-agent", "secret", "get", "OTHER")
	cmd.Env = append(append(os.Environ(), s.AgentEnv()...), "BUILDKITE_JOB_ID=job-9")
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("a secret the store lacks was found: %q", out)
	}
}

// TestRefuses: what the dashboards refuse, the stand-in refuses.
func TestRefuses(t *testing.T) {
	s := New(t, "tok")
	good := `{"kind":"results","source_file":"f","workload":"w","task":"t","data":{"results":{}}}`
	for _, c := range []struct {
		name, url, auth, ctype, body string
		code                         int
	}{
		{"ok", s.EvalURL(), "Bearer tok", "application/json", good, 200},
		{"no token", s.EvalURL(), "", "application/json", good, 401},
		{"wrong token", s.EvalURL(), "Bearer nope", "application/json", good, 401},
		{"not json", s.EvalURL(), "Bearer tok", "application/json", `{"kind":`, 400},
		{"content type", s.EvalURL(), "Bearer tok", "text/plain", good, 415},
		{"bad kind", s.EvalURL(), "Bearer tok", "application/json", `{"kind":"x"}`, 400},
		{"bad row", s.EvalURL(), "Bearer tok", "application/json", strings.Replace(good, `"task":"t"`, `"task":""`, 1), 422},
		{"perf row on eval", s.PerfURL(), "Bearer tok", "application/json", good, 422},
	} {
		req, _ := http.NewRequest(http.MethodPost, c.url, strings.NewReader(c.body))
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		req.Header.Set("Content-Type", c.ctype)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.code {
			t.Errorf("%s: HTTP %d, want %d", c.name, resp.StatusCode, c.code)
		}
	}
	if n := len(s.Rows("eval")); n != 1 {
		t.Errorf("%d eval rows accepted, want 1", n)
	}
	if n := len(s.Refused()); n != 7 {
		t.Errorf("%d refusals recorded, want 7: %q", n, s.Refused())
	}
}
