package buildkite_test

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/diff"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/backends/buildkite"
	"github.com/wlcdev/wlc/backends/goldentest"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/testrig/bktest"
)

func lowerPipeline(t *testing.T, b backends.Backend, ws []plan.Workload, env map[string]string) []byte {
	t.Helper()
	arts := lowerPipelines(t, b, ws, env)
	if len(arts) != 1 || arts[0].Path != buildkite.PipelineFile {
		t.Fatalf("Lower produced %d artifacts, want exactly %s", len(arts), buildkite.PipelineFile)
	}
	return arts[0].Data
}

// lowerPipelines lowers ws into one or (over the jobs-per-upload limit)
// several pipelines.
func lowerPipelines(t testing.TB, b backends.Backend, ws []plan.Workload, env map[string]string) []backends.Artifact {
	t.Helper()
	arts, err := b.Lower(ws, backends.Options{Env: env, WorkloadsDir: "workloads"})
	if err != nil {
		t.Fatalf("Lower: %v", err)
	}
	if err := backends.CheckArtifacts(arts); err != nil {
		t.Fatal(err)
	}
	return arts
}

// TestGolden is the backends' golden test (backends/goldentest; the env
// section is the exporting environment, WORKLOADS in it selects, otherwise
// the nightly set; a diff shows each upload's library decoded). Each
// pipeline then goes through Buildkite's own tools: the JSON schema,
// go-pipeline's round trip, and the real agent's dry-run upload (exit 0,
// no WARN, with the env as the uploader's environment); the direct writer
// must have written it with yaml.v3's bytes. The script each step runs,
// decoded from the agent's output, must be the runner's script byte for
// byte.
func TestGolden(t *testing.T) {
	runners := goldenRunners()
	goldentest.Run(t, buildkite.New(runners), goldentest.Checks{
		Mode: 0o644,
		View: func(y []byte) []byte { return []byte(decodeLibrary(y)) },
		Artifact: func(t *testing.T, _ *goldentest.Case, a backends.Artifact) {
			bktest.ValidateSchema(t, a.Data)
			bktest.RoundTrip(t, a.Data)
		},
		Case: func(t *testing.T, c *goldentest.Case, arts []backends.Artifact) {
			headers, ps, err := buildkite.New(runners).Pipelines(c.Plans, c.Opts)
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range ps {
				sameAsYAMLv3(t, fmt.Sprintf("pipeline %d", i+1), p, true)
				if direct, err := buildkite.EncodeDirect(headers[i], p); err != nil || !bytes.Equal(direct, arts[i].Data) {
					t.Errorf("%s was not written by the direct writer (%v)", arts[i].Path, err)
				}
			}
			// Each pipeline is one upload: each must pass on its own.
			var steps []uploadedStep
			for _, a := range arts {
				steps = append(steps, uploadedSteps(t, bktest.DryRun(t, a.Data, c.Env))...)
			}
			if len(steps) != len(c.Plans) {
				t.Fatalf("agent uploaded %d steps, want %d", len(steps), len(c.Plans))
			}
			for i, w := range c.Plans {
				runner := runners[runnerOf(w)]
				want, err := runner.Lower([]plan.Workload{w}, c.Opts)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(scriptOf(t, steps[i], want[0].Path), want[0].Data) {
					t.Errorf("step %d (%s): the script the agent would run differs from the %s runner's", i, w.Name, runner.Name())
				}
			}
		},
	})
}

func runnerOf(w plan.Workload) string {
	return map[string]string{"docker": "docker", "k8s": "native", "slurm": "slurm"}[w.Profile.Runtime]
}

type uploadedStep struct {
	Label   string            `json:"label"`
	Command string            `json:"command"`
	Env     map[string]string `json:"env"`
	Skip    any               `json:"skip"`
	Plugins []map[string]any  `json:"plugins"`
	Retry   struct {
		Automatic []struct {
			ExitStatus any `json:"exit_status"`
			Limit      int `json:"limit"`
		} `json:"automatic"`
	} `json:"retry"`
	// pipelineEnv is the upload's env, which the agent gives every job of
	// the upload (the library the step rebuilds its scripts from).
	pipelineEnv map[string]string
}

func uploadedSteps(t testing.TB, j []byte) []uploadedStep {
	t.Helper()
	var doc struct {
		Env   map[string]string `json:"env"`
		Steps []uploadedStep    `json:"steps"`
	}
	if err := json.Unmarshal(j, &doc); err != nil {
		t.Fatalf("agent output: %v\n%s", err, j)
	}
	for i := range doc.Steps {
		doc.Steps[i].pipelineEnv = doc.Env
	}
	return doc.Steps
}

// runLine is the start of a step command's last line, which runs the job.
const runLine = "env -u " + buildkite.LibraryVar + " bash .wlc/wlc-token.sh "

// scriptOf runs the step's command as a job would (bash -e -c, in a fresh
// checkout, with the upload's and the step's env) up to its last line, the
// one that would run the job, and returns the file it wrote at
// .wlc/<name>: the script the job would run, rebuilt and sha256-checked by
// the command itself.
func scriptOf(t testing.TB, s uploadedStep, name string) []byte {
	t.Helper()
	body, last, ok := strings.Cut(strings.TrimSuffix(s.Command, "\n"), "\n"+runLine)
	if !ok || strings.Contains(last, "\n") {
		t.Fatalf("the command does not end with a line starting %q:\n%s", runLine, s.Command)
	}
	dir := t.TempDir()
	cmd := exec.Command("bash", "-e", "-c", body+"\n")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LANG=C"}
	for _, env := range []map[string]string{s.pipelineEnv, s.Env} {
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("writing the step's files: %v\n%s", err, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, ".wlc", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// lineDiff shows how got differs from want, with each upload's library
// decoded so a runner's change reads as a text diff (a step's own text is
// compressed against the library and stays base64).
func lineDiff(want, got []byte) string {
	return string(diff.Diff("want", []byte(decodeLibrary(want)), "got", []byte(decodeLibrary(got))))
}

// decodeLibrary replaces the body of every library env block in a pipeline
// with the decoded text, each line prefixed "| ".
func decodeLibrary(y []byte) string {
	var out strings.Builder
	lines := strings.Split(string(y), "\n")
	for i := 0; i < len(lines); i++ {
		out.WriteString(lines[i] + "\n")
		if strings.TrimSpace(lines[i]) != buildkite.LibraryVar+": |" {
			continue
		}
		var b64 strings.Builder
		for i++; i < len(lines) && strings.HasPrefix(lines[i], "    "); i++ {
			b64.WriteString(strings.TrimSpace(lines[i]))
		}
		i--
		z, err := base64.StdEncoding.DecodeString(b64.String())
		var data []byte
		if err == nil {
			var r *gzip.Reader
			if r, err = gzip.NewReader(bytes.NewReader(z)); err == nil {
				data, err = io.ReadAll(r)
			}
		}
		if err != nil {
			out.WriteString("(undecodable library: " + err.Error() + ")\n")
		}
		for _, l := range strings.Split(string(data), "\n") {
			out.WriteString("| " + l + "\n")
		}
	}
	return out.String()
}
