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
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/backends/buildkite"
	"github.com/wlcdev/wlc/backends/runner/runnertest"
	"github.com/wlcdev/wlc/internal/bktest"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/selection"
	"github.com/wlcdev/wlc/internal/testenv"
)

// A golden archive (testdata/backends/buildkite/*.txtar) holds a workloads
// package (cue.mod/, workloads/), the exporting environment (`env`: one
// NAME=value per line; WORKLOADS in it selects, otherwise the nightly set)
// and the expected `pipeline.yml` (or, over the jobs-per-upload limit,
// `pipeline-1.yml`, … in upload order). WLC_UPDATE=1 rewrites them.
type golden struct {
	path    string
	archive *txtar.Archive
	env     map[string]string
	want    []backends.Artifact // the archive's pipeline files, in archive order
}

// isPipelineFile reports whether an archive file is an expected pipeline.
func isPipelineFile(name string) bool {
	ok, _ := filepath.Match("pipeline*.yml", name)
	return ok
}

func goldenDir(t testing.TB) string {
	return filepath.Join(testenv.RepoRoot(t), "testdata", "backends", "buildkite")
}

func readGoldens(t testing.TB) []*golden {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(goldenDir(t), "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden archives in %s (%v)", goldenDir(t), err)
	}
	var out []*golden
	for _, f := range files {
		a, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		g := &golden{path: f, archive: a, env: map[string]string{}}
		for _, file := range a.Files {
			switch file.Name {
			case "env":
				for _, line := range strings.Split(string(file.Data), "\n") {
					if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
						continue
					}
					k, v, ok := strings.Cut(line, "=")
					if !ok {
						t.Fatalf("%s: env line %q is not NAME=value", f, line)
					}
					g.env[k] = v
				}
			default:
				if isPipelineFile(file.Name) {
					g.want = append(g.want, backends.Artifact{Path: file.Name, Data: file.Data})
				}
			}
		}
		out = append(out, g)
	}
	return out
}

// plans loads the archive's workloads package and resolves the selection
// the way `wlc export` does.
func (g *golden) plans(t testing.TB) []plan.Workload {
	t.Helper()
	dir := runnertest.Extract(t, g.archive, func(name string) bool { return name != "env" && !isPipelineFile(name) })
	r := runnertest.LoadDir(t, dir)
	var cands []selection.Candidate
	for _, w := range r.Workloads {
		cands = append(cands, selection.Candidate{Name: w.Name, File: w.File, Nightly: w.Nightly})
	}
	var names []string
	var err error
	if entries := selection.Split(g.env["WORKLOADS"]); len(entries) > 0 {
		names, err = selection.Pick(cands, entries)
	} else {
		names, err = selection.Nightly(cands)
	}
	if err != nil {
		t.Fatal(err)
	}
	return runnertest.Resolve(t, r, names, plan.OverridesFromEnv(func(k string) string { return g.env[k] }))
}

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

// sameArtifacts reports whether a and b are the same files in the same order.
func sameArtifacts(a, b []backends.Artifact) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Path != b[i].Path || !bytes.Equal(a[i].Data, b[i].Data) {
			return false
		}
	}
	return true
}

// TestGolden lowers every archive, compares with its pipeline.yml and runs
// the pipeline through Buildkite's own tools: the real agent's dry-run
// upload (exit 0, no WARN, with the archive's env as the uploader's
// environment), the JSON schema and go-pipeline's round trip. The script
// each step runs, decoded from the agent's output, must be the runner's
// script byte for byte.
func TestGolden(t *testing.T) {
	update := os.Getenv("WLC_UPDATE") == "1"
	runners := goldenRunners()
	for _, g := range readGoldens(t) {
		t.Run(strings.TrimSuffix(filepath.Base(g.path), ".txtar"), func(t *testing.T) {
			ws := g.plans(t)
			b := buildkite.New(runners)
			got := lowerPipelines(t, b, ws, g.env)
			if again := lowerPipelines(t, buildkite.New(runners), ws, g.env); !sameArtifacts(got, again) {
				t.Fatal("two exports differ")
			}
			if !sameArtifacts(got, g.want) {
				if update {
					writeGolden(t, g, got)
				} else {
					t.Errorf("pipelines differ from %s (WLC_UPDATE=1 rewrites them; read the diff):\n%s", g.path, artifactsDiff(g.want, got))
				}
			}

			// The direct writer wrote every golden, with yaml.v3's bytes.
			headers, ps, err := b.Pipelines(ws, backends.Options{Env: g.env, WorkloadsDir: "workloads"})
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range ps {
				sameAsYAMLv3(t, fmt.Sprintf("pipeline %d", i+1), p, true)
				if direct, err := buildkite.EncodeDirect(headers[i], p); err != nil || !bytes.Equal(direct, got[i].Data) {
					t.Errorf("%s was not written by the direct writer (%v)", got[i].Path, err)
				}
			}

			// Each pipeline is one upload: each must pass on its own.
			var steps []uploadedStep
			for _, a := range got {
				bktest.ValidateSchema(t, a.Data)
				bktest.RoundTrip(t, a.Data)
				steps = append(steps, uploadedSteps(t, bktest.DryRun(t, a.Data, g.env))...)
			}
			if len(steps) != len(ws) {
				t.Fatalf("agent uploaded %d steps, want %d", len(steps), len(ws))
			}
			for i, w := range ws {
				runner := runners[runnerOf(w)]
				arts, err := runner.Lower([]plan.Workload{w}, backends.Options{Env: g.env, WorkloadsDir: "workloads"})
				if err != nil {
					t.Fatal(err)
				}
				script := scriptOf(t, steps[i], arts[0].Path)
				if !bytes.Equal(script, arts[0].Data) {
					t.Errorf("step %d (%s): the script the agent would run differs from the %s runner's", i, w.Name, runner.Name())
				}
			}
		})
	}
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

func writeGolden(t *testing.T, g *golden, arts []backends.Artifact) {
	t.Helper()
	files := slices.DeleteFunc(g.archive.Files, func(f txtar.File) bool { return isPipelineFile(f.Name) })
	for _, a := range arts {
		files = append(files, txtar.File{Name: a.Path, Data: a.Data})
	}
	g.archive.Files = files
	if err := os.WriteFile(g.path, txtar.Format(g.archive), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("rewrote %s", g.path)
}

// artifactsDiff is lineDiff of the files' concatenation, each headed by
// its name.
func artifactsDiff(want, got []backends.Artifact) string {
	cat := func(as []backends.Artifact) []byte {
		var b bytes.Buffer
		for _, a := range as {
			fmt.Fprintf(&b, "== %s ==\n%s", a.Path, a.Data)
		}
		return b.Bytes()
	}
	return lineDiff(cat(want), cat(got))
}

// lineDiff shows how got differs from want, with each upload's library
// decoded so a runner's change reads as a text diff (a step's own text is
// compressed against the library and stays base64).
func lineDiff(want, got []byte) string {
	return cmp.Diff(strings.Split(decodeLibrary(want), "\n"), strings.Split(decodeLibrary(got), "\n"))
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
