package runner_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wlcdev/wlc/backends/runner"
	"github.com/wlcdev/wlc/internal/plan"
)

// tokenProbe runs lib.sh as the head of a job script file with env and
// reports what the running script holds: whether its own environment holds
// the token, a child's the token or its file's path, what the header file
// says, and what it leaves.
const tokenProbe = `
printf 'self=%s\n' "$(tr '\0' '\n' </proc/$$/environ | grep -c -e tok-secret || true)"
printf 'child=%s\n' "$(sh -c 'tr "\0" "\n" </proc/self/environ' | grep -c -e tok-secret -e WLC_INGEST || true)"
printf 'header=%s\n' "$WLC_INGEST_HEADER"
[ -z "$WLC_INGEST_HEADER" ] || printf 'content=%s\nmode=%s %s\n' "$(cat "$WLC_INGEST_HEADER")" "$(stat -c %a "$WLC_INGEST_HEADER")" "$(stat -c %a "${WLC_INGEST_HEADER%/*}")"
printf 'stdin_token=%s\n' "$WLC_INGEST_TOKEN"
printf 'slurm_export=%s\n' "${SLURM_EXPORT_ENV-unset}"
`

func runTokenProbe(t *testing.T, asFile bool, env ...string) (map[string]string, string) {
	t.Helper()
	script := "set -euo pipefail\n" + runner.Library(plan.Workload{}) + tokenProbe
	var cmd *exec.Cmd
	if asFile {
		p := filepath.Join(t.TempDir(), "job.sh")
		if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		cmd = exec.Command("bash", p)
	} else {
		cmd = exec.Command("bash", "-c", script)
	}
	tmp := t.TempDir()
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "TMPDIR=" + tmp}, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			got[k] = v
		}
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) > 0 {
		t.Errorf("left after exit: %q", left)
	}
	return got, string(out)
}

// TestTokenHandoff: a job script started with the token (as
// INGEST_BEARER_TOKEN with blanks around it, as a WLC_INGEST_TOKEN_FILE,
// in sbatch's SLURM_EXPORT_ENV list) holds it in no environment, its own
// or a child's: only in a 0600 header file of a 0700 directory, gone at
// exit; the given file stays. A script bash reads from -c (no file to
// start again) keeps the token in an unexported variable for curl's stdin
// and says so; a blank token is no token.
func TestTokenHandoff(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("tok-secret-f\nsecond line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		env     []string
		content string
		export  string
	}{
		{"env", []string{"INGEST_BEARER_TOKEN=  tok-secret-e  "}, "Authorization: Bearer tok-secret-e", "unset"},
		{"file", []string{"WLC_INGEST_TOKEN_FILE=" + tokenFile}, "Authorization: Bearer tok-secret-f", "unset"},
		{"sbatch_export", []string{"INGEST_BEARER_TOKEN=tok-secret-s", "SLURM_EXPORT_ENV=ALL,PATH=/usr/bin:/bin,INGEST_BEARER_TOKEN=tok-secret-s,FOO=1"},
			"Authorization: Bearer tok-secret-s", "ALL,PATH=/usr/bin:/bin,FOO=1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, out := runTokenProbe(t, true, c.env...)
			if got["self"] != "0" || got["child"] != "0" {
				t.Errorf("the token or its file's path is in the script's environment (%s) or a child's (%s):\n%s", got["self"], got["child"], out)
			}
			if got["content"] != c.content || got["mode"] != "600 700" || got["stdin_token"] != "" {
				t.Errorf("header %q (mode %s), unexported token %q; want %q in a 600 file of a 700 directory only:\n%s", got["content"], got["mode"], got["stdin_token"], c.content, out)
			}
			if got["slurm_export"] != c.export {
				t.Errorf("SLURM_EXPORT_ENV %q, want %q", got["slurm_export"], c.export)
			}
		})
	}
	if _, err := os.Stat(tokenFile); err != nil {
		t.Errorf("the given token file was removed: %v", err)
	}

	got, out := runTokenProbe(t, false, "INGEST_BEARER_TOKEN=tok-secret-c")
	if got["header"] != "" || got["stdin_token"] != "tok-secret-c" || !strings.Contains(out, "the token stays in this shell's environment") || got["child"] != "0" {
		t.Errorf("bash -c: header %q, token %q, child %s; want the stdin fallback, said:\n%s", got["header"], got["stdin_token"], got["child"], out)
	}
	got, out = runTokenProbe(t, true, "INGEST_BEARER_TOKEN=   ")
	if got["header"] != "" || got["stdin_token"] != "" {
		t.Errorf("a blank token: header %q, token %q:\n%s", got["header"], got["stdin_token"], out)
	}
}
