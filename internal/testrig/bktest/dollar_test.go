package bktest

import (
	"errors"
	"strings"
	"testing"
)

// commandAfter returns step 0's command as the agent and as go-pipeline
// v0.18.1 would upload it, or their errors.
func commandAfter(t *testing.T, cmd string, env map[string]string) (agent string, agentErr error, lib string, libErr error) {
	t.Helper()
	y := []byte("steps:\n  - command: '" + strings.ReplaceAll(cmd, "'", "''") + "'\n")
	get := func(j []byte) string {
		return stepField(t, decode(t, j), "steps", 0, "command").(string)
	}
	if j, err := RunDryRun(t.Context(), agentPath(t), y, env); err != nil {
		agentErr = err
	} else {
		agent = get(j)
	}
	if j, err := Interpolate(y, env); err != nil {
		libErr = err
	} else {
		lib = get(j)
	}
	return
}

// TestDollarInCommands pins what upload-time interpolation does to `$` in a
// command (agent v3.78.0 and go-pipeline v0.18.1, which agree on all of
// these): unescaped references are replaced by the *uploader's* environment,
// `$$` reaches the job as a single `$`.
func TestDollarInCommands(t *testing.T) {
	env := map[string]string{"HOME": "/home/uploader"}
	for _, tc := range []struct{ in, want string }{
		// Unescaped: resolved on the uploading machine, not in the job.
		{`echo $HOME`, `echo /home/uploader`},
		{`echo ${HOME}`, `echo /home/uploader`},
		{`echo $SLURM_JOB_ID.`, `echo .`}, // unset -> empty, silently
		{`echo ${X:-y}`, `echo y`},
		{`echo ${HOME:-y}`, `echo /home/uploader`},
		{`echo $(hostname) $((1+2))`, `echo $(hostname) $((1+2))`}, // not variables
		// Escaped: reaches the job unchanged.
		{`echo $$HOME`, `echo $HOME`},
		{`echo $${HOME}`, `echo ${HOME}`},
		{`echo $${X:-y}`, `echo ${X:-y}`},
		{`echo $${#A[@]} $${A[0]} $${X%%.*} $${X//a/b} $${X:?e}`, `echo ${#A[@]} ${A[0]} ${X%%.*} ${X//a/b} ${X:?e}`},
		{`f() { echo $$1 "$$@"; }`, `f() { echo $1 "$@"; }`},
		{`echo $$(hostname) $$((1+2))`, `echo $(hostname) $((1+2))`},
		{`echo \$HOME \${X:-y}`, `echo $HOME ${X:-y}`}, // backslash escape works too
		{`echo $$$$`, `echo $$`}, // the shell's PID
	} {
		agent, agentErr, lib, libErr := commandAfter(t, tc.in, env)
		if agentErr != nil || agent != tc.want {
			t.Errorf("agent: %q -> %q, %v; want %q", tc.in, agent, agentErr, tc.want)
		}
		if libErr != nil || lib != tc.want {
			t.Errorf("go-pipeline: %q -> %q, %v; want %q", tc.in, lib, libErr, tc.want)
		}
	}
}

// TestDollarBashOnlyExpansionsFailUpload: bash-only forms written unescaped
// make the whole upload fail (exit 1), so they can only appear as `$$`.
func TestDollarBashOnlyExpansionsFailUpload(t *testing.T) {
	for _, tc := range []struct {
		in, agentMsg string
		libOK        bool // go-pipeline v0.18.1 tolerates it, the agent does not
	}{
		{`echo ${#A[@]}`, `Expected identifier to start with a letter, got #`, false},
		{`echo ${A[0]}`, `Expected an operator, got [`, false},
		{`echo ${X%%.*}`, `Expected an operator, got %`, false},
		{`echo ${X//a/b}`, `Expected an operator, got /`, false},
		{`echo $1`, `Expected identifier to start with a letter, got 1`, true},
		{`echo "$@"`, `Expected identifier to start with a letter, got @`, true},
	} {
		agent, agentErr, lib, libErr := commandAfter(t, tc.in, nil)
		var de *DryRunError
		if !errors.As(agentErr, &de) || de.ExitCode != 1 {
			t.Errorf("agent: %q -> %q, %v; want exit 1", tc.in, agent, agentErr)
			continue
		}
		want := `fatal: pipeline interpolation of "pipeline.yml" failed: interpolating command: ` + tc.agentMsg
		if len(de.Problems) != 1 || de.Problems[0] != want {
			t.Errorf("agent: %q problems %q, want [%q]", tc.in, de.Problems, want)
		}
		if tc.libOK {
			if libErr != nil || lib != tc.in {
				t.Errorf("go-pipeline: %q -> %q, %v; want it unchanged", tc.in, lib, libErr)
			}
		} else if libErr == nil {
			t.Errorf("go-pipeline: %q -> %q, want an error", tc.in, lib)
		}
	}
}

// TestDollarNestedInEscapedBraces pins where agent v3.78.0 (interpolate
// v0.1.3) and go-pipeline v0.18.1 (interpolate v0.1.5) disagree: inside an
// escaped `$${...}` the agent copies the text verbatim, the newer library
// keeps interpolating (and unescaping). No spelling of a nested `$VAR`
// default comes out right on both; only `$(...)` does, because neither treats
// it as a variable. The backend must not emit `${X:-$Y}` in a command (put it
// in a script file instead).
func TestDollarNestedInEscapedBraces(t *testing.T) {
	env := map[string]string{"B": "from-uploader"}
	for _, tc := range []struct{ in, agent, lib string }{
		{`$${HF_HOME:-$(pwd)/c}`, `${HF_HOME:-$(pwd)/c}`, `${HF_HOME:-$(pwd)/c}`},   // same on both: use this
		{`$${HF_HOME:-$$(pwd)/c}`, `${HF_HOME:-$$(pwd)/c}`, `${HF_HOME:-$(pwd)/c}`}, // agent leaves $$ = PID
		{`$${A:-$$B}`, `${A:-$$B}`, `${A:-$B}`},
		{`$${A:-$B}`, `${A:-$B}`, `${A:-from-uploader}`},
		{`$${A:-$${B}}`, `${A:-$${B}}`, `${A:-${B}}`},
	} {
		agent, agentErr, lib, libErr := commandAfter(t, "echo "+tc.in, env)
		if agentErr != nil || agent != "echo "+tc.agent {
			t.Errorf("agent: %q -> %q, %v; want %q", tc.in, agent, agentErr, "echo "+tc.agent)
		}
		if libErr != nil || lib != "echo "+tc.lib {
			t.Errorf("go-pipeline: %q -> %q, %v; want %q", tc.in, lib, libErr, "echo "+tc.lib)
		}
	}
}

// TestDollarInEnv: step and pipeline env values are interpolated the same
// way, and pipeline env entries feed later references.
func TestDollarInEnv(t *testing.T) {
	y := []byte(`env:
  BASE: /opt/$$USER
  FROM_UPLOADER: $HOME
steps:
  - command: "true"
    env:
      A: $HOME
      B: $$HOME
      C: ${X:-y}
      D: $${X:-y}
      E: $FROM_UPLOADER/x
`)
	env := map[string]string{"HOME": "/home/uploader"}
	for name, j := range map[string][]byte{"agent": DryRun(t, y, env), "go-pipeline": Interpolated(t, y, env)} {
		doc := decode(t, j)
		want := map[string]any{"A": "/home/uploader", "B": "$HOME", "C": "y", "D": "${X:-y}", "E": "/home/uploader/x"}
		got := stepField(t, doc, "steps", 0, "env").(map[string]any)
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: step env %s = %q, want %q", name, k, got[k], v)
			}
		}
		penv := doc["env"].(map[string]any)
		if penv["BASE"] != "/opt/$USER" || penv["FROM_UPLOADER"] != "/home/uploader" {
			t.Errorf("%s: pipeline env = %v", name, penv)
		}
	}
}

// TestUnescapedSecretLeaksAndWarns: an unescaped `$HF_TOKEN` copies the
// uploader's token into the pipeline (visible in the Buildkite UI); the
// agent warns, which DryRun treats as failure. `$$HF_TOKEN` is clean.
func TestUnescapedSecretLeaksAndWarns(t *testing.T) {
	env := map[string]string{"HF_TOKEN": "hf_0123456789abcdef"}
	_, err := RunDryRun(t.Context(), agentPath(t), []byte("steps:\n  - command: huggingface-cli login --token $HF_TOKEN\n"), env)
	var de *DryRunError
	if !errors.As(err, &de) || de.ExitCode != 0 || len(de.Problems) == 0 ||
		!strings.Contains(de.Problems[0], `secret environment variables: [HF_TOKEN]`) {
		t.Errorf("unescaped $HF_TOKEN: got %v, want a secret WARN", err)
	}
	j := DryRun(t, []byte("steps:\n  - command: huggingface-cli login --token $$HF_TOKEN\n"), env)
	if got := stepField(t, decode(t, j), "steps", 0, "command"); got != "huggingface-cli login --token $HF_TOKEN" {
		t.Errorf("escaped: command = %q", got)
	}
}
