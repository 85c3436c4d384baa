package buildkite_test

import (
	"bytes"
	"encoding/json"
	"fmt"
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
	if ps := pipelinesOf(arts); len(ps) != 1 || ps[0].Path != buildkite.PipelineFile {
		t.Fatalf("Lower produced %d pipelines, want exactly %s", len(ps), buildkite.PipelineFile)
	}
	return arts[0].Data
}

// pipelinesOf is the pipeline files among an export's artifacts.
func pipelinesOf(arts []backends.Artifact) []backends.Artifact {
	var ps []backends.Artifact
	for _, a := range arts {
		if isPipeline(a) {
			ps = append(ps, a)
		}
	}
	return ps
}

// lowerPipelines lowers ws into one or (over the jobs-per-upload limit)
// several pipelines, the scripts and upload.sh.
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
// the nightly set). Each pipeline then goes through Buildkite's own tools:
// the JSON schema, go-pipeline's round trip, and the real agent's dry-run
// upload (exit 0, no WARN, with the env as the uploader's environment); the
// direct writer must have written it with yaml.v3's bytes. The export's
// scripts go to an Agent API stand-in as the upload step's artifacts, and
// each step's command, run up to its last line, must download and check
// exactly its runner's script.
func TestGolden(t *testing.T) {
	runners := goldenRunners()
	goldentest.Run(t, buildkite.New(runners), goldentest.Checks{
		Mode: 0o644,
		Artifact: func(t *testing.T, _ *goldentest.Case, a backends.Artifact) {
			if isPipeline(a) {
				bktest.ValidateSchema(t, a.Data)
				bktest.RoundTrip(t, a.Data)
			}
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
				if isPipeline(a) {
					steps = append(steps, uploadedSteps(t, bktest.DryRun(t, a.Data, c.Env))...)
				}
			}
			if len(steps) != len(c.Plans) {
				t.Fatalf("agent uploaded %d steps, want %d", len(steps), len(c.Plans))
			}
			pub := publish(t, arts)
			for i, w := range c.Plans {
				runner := runners[runnerOf(w)]
				want, err := runner.Lower([]plan.Workload{w}, c.Opts)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(pub.scriptOf(t, steps[i], want[0].Path), want[0].Data) {
					t.Errorf("step %d (%s): the script the step would run differs from the %s runner's", i, w.Name, runner.Name())
				}
			}
		},
	})
}

func isPipeline(a backends.Artifact) bool { return strings.HasSuffix(a.Path, ".yml") }

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
}

func uploadedSteps(t testing.TB, j []byte) []uploadedStep {
	t.Helper()
	var doc struct {
		Steps []uploadedStep `json:"steps"`
	}
	if err := json.Unmarshal(j, &doc); err != nil {
		t.Fatalf("agent output: %v\n%s", err, j)
	}
	return doc.Steps
}

// lineDiff shows how got differs from want.
func lineDiff(want, got []byte) string {
	return string(diff.Diff("want", want, "got", got))
}
