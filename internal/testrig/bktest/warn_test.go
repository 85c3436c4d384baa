package bktest

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDryRunDetectsWarnings: each pipeline/environment makes agent v3.78.0
// exit 0 but log WARN; RunDryRun must turn that into a *DryRunError.
func TestDryRunDetectsWarnings(t *testing.T) {
	agent := agentPath(t)
	for _, tc := range []struct {
		name, yaml string
		env        map[string]string
		want       string // substring of the first problem
		parseWarn  bool   // go-pipeline Parse warns too (so RoundTrip catches it)
	}{
		{"unknown step type", "steps:\n  - command: x\n  - frobnicate: {}\n", nil,
			"while unmarshaling step 2 of 2\n      ↳ cannot infer step type", true},
		{"no steps", "env:\n  A: b\n", nil, "pipeline contains no steps", true},
		{"plugins of the wrong type", "steps:\n  - command: x\n    plugins: 5\n", nil,
			"unmarshaling plugins: got int", true},
		{"matrix of the wrong type", "steps:\n  - command: x\n    matrix: 5\n", nil,
			"unsupported src type for Matrix: int", true},
		{"literal secret in pipeline env", "env:\n  HF_TOKEN: hf_0123456789\nsteps:\n  - command: x\n", nil,
			"secret environment variables: [HF_TOKEN]", false},
		{"literal secret in step env", "steps:\n  - command: x\n    env:\n      DB_PASSWORD: hunter2hunter2\n", nil,
			"secret environment variables: [DB_PASSWORD]", false},
		{"short secret-named variable in upload env", "steps:\n  - command: x\n", map[string]string{"MY_TOKEN": "ab"},
			"below minimum length (6 bytes) and will not be redacted: MY_TOKEN", false},
		{"BUILDKITE_COMMIT outside a git checkout", "steps:\n  - command: x\n", map[string]string{"BUILDKITE_COMMIT": "HEAD"},
			`Error running git rev-parse "HEAD"`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := RunDryRun(t.Context(), agent, []byte(tc.yaml), tc.env)
			var de *DryRunError
			if !errors.As(err, &de) {
				t.Fatalf("RunDryRun = %v, want a *DryRunError", err)
			}
			if de.ExitCode != 0 || len(de.Problems) == 0 || !strings.HasPrefix(de.Problems[0], "WARN ") ||
				!strings.Contains(de.Problems[0], tc.want) {
				t.Errorf("got exit %d, problems %q; want exit 0 and a WARN containing %q", de.ExitCode, de.Problems, tc.want)
			}
			_, rtErr := CheckRoundTrip([]byte(tc.yaml))
			if tc.parseWarn != (rtErr != nil) {
				t.Errorf("CheckRoundTrip = %v, want error: %v", rtErr, tc.parseWarn)
			}
		})
	}
}

// TestDryRunSilentlyAccepts documents what the agent lets through without a
// word, i.e. what only ValidateSchema (or nothing) catches.
func TestDryRunSilentlyAccepts(t *testing.T) {
	agent := agentPath(t)
	sp := schemaPath(t)
	for _, tc := range []struct {
		name, yaml    string
		schemaCatches bool
	}{
		{"unknown top-level key", "bogus_top: 1\nsteps:\n  - command: x\n", false},
		{"unknown command-step key", "steps:\n  - command: x\n    bogus: 1\n", true},
		{"timeout as a string", "steps:\n  - command: x\n    timeout_in_minutes: \"x\"\n", true},
		{"duplicate key (last wins)", "steps:\n  - command: x\n    key: a\n    key: b\n", true},
		{"secret via pure substitution", "steps:\n  - command: x\n    env:\n      HF_TOKEN: $$HF_TOKEN\n", false},
	} {
		if _, err := RunDryRun(t.Context(), agent, []byte(tc.yaml), nil); err != nil {
			t.Errorf("%s: agent now complains (update this list): %v", tc.name, err)
		}
		if err := CheckSchema(sp, []byte(tc.yaml)); (err != nil) != tc.schemaCatches {
			t.Errorf("%s: CheckSchema = %v, want error: %v", tc.name, err, tc.schemaCatches)
		}
	}
}

func TestDryRunFatal(t *testing.T) {
	_, err := RunDryRun(t.Context(), agentPath(t), []byte("steps: [\n"), nil)
	var de *DryRunError
	if !errors.As(err, &de) || de.ExitCode != 1 ||
		!cmp.Equal(de.Problems, []string{`fatal: pipeline parsing of "pipeline.yml" failed: line 1: did not find expected node content`}) {
		t.Errorf("got %#v", err)
	}
}

// TestDryRunEnvironmentIsControlled: nothing from the test process reaches
// the agent, so a developer's or CI's BUILDKITE_* or HOME cannot change the
// result.
func TestDryRunEnvironmentIsControlled(t *testing.T) {
	t.Setenv("LEAK_ME", "leaked")
	t.Setenv("BUILDKITE_AGENT_EXPERIMENT", "interpolation-prefers-runtime-env")
	j := DryRun(t, []byte("steps:\n  - command: echo \"[$LEAK_ME]\" \"[$HOME]\"\n"), nil)
	got := stepField(t, decode(t, j), "steps", 0, "command").(string)
	if strings.Contains(got, "leaked") ||
		!strings.HasPrefix(got, `echo "[]" "[/`) || strings.Contains(got, `"[`+os.Getenv("HOME")+`]"`) {
		t.Errorf("command = %q: the test environment leaked in (want LEAK_ME empty, HOME a scratch dir)", got)
	}
}

func TestStderrProblems(t *testing.T) {
	stderr := `2026-11-30 10:00:14 INFO   Reading pipeline config from "pipeline.yml"
2026-11-30 10:00:14 WARN   There were some issues with the pipeline input - pipeline upload will proceed, but might not succeed:
while unmarshaling the value for key "steps" into struct field "Steps"
  ↳ while unmarshaling step 1 of 1
2026-11-30 10:00:14 INFO   still fine
2026-11-30 10:00:14 ERROR  something
fatal: it broke
`
	want := []string{
		"WARN There were some issues with the pipeline input - pipeline upload will proceed, but might not succeed:\n" +
			"while unmarshaling the value for key \"steps\" into struct field \"Steps\"\n  ↳ while unmarshaling step 1 of 1",
		"ERROR something",
		"fatal: it broke",
	}
	if d := cmp.Diff(want, stderrProblems(stderr)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	// A changed log layout must not hide a warning.
	if got := stderrProblems("[warn] WARN: x\n"); len(got) != 1 {
		t.Errorf("unformatted WARN not reported: %q", got)
	}
	if got := stderrProblems(`2026-11-30 10:00:14 INFO   Reading pipeline config from "pipeline.yml"` + "\n"); len(got) != 0 {
		t.Errorf("INFO reported: %q", got)
	}
}
