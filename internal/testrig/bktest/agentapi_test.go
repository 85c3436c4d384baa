package bktest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// agentJob runs the real agent with args as a job of a's build would,
// in dir.
func agentJob(t *testing.T, a *AgentAPI, job Job, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(Agent(t), args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + dir}, a.Env(job)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestAgentAPIArtifacts: what the real agent uploads to the stand-in
// (`artifact upload`, globs relative to the job's directory) it downloads
// again (`artifact download --step`), scoped to the uploading step by key,
// label or job id; a path another step uploaded is not found, and a
// re-upload of a path is what a download gets.
func TestAgentAPIArtifacts(t *testing.T) {
	a := NewAgentAPI(t)
	up := Job{ID: "job-up", StepKey: "wlc-upload", Label: ":pipeline: upload"}
	other := Job{ID: "job-other", StepKey: "other", Label: "other"}
	step := Job{ID: "job-step", Label: "a step"}
	for _, j := range []Job{up, other, step} {
		a.AddJob(j)
	}
	src := t.TempDir()
	files := map[string]string{"scripts/a.sh": "echo a\n", "scripts/b.sbatch": "#!/bin/bash\necho b\n", "helpers/token.sh": "exec \"$@\"\n"}
	for p, data := range files {
		os.MkdirAll(filepath.Join(src, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(src, p), []byte(data), 0o644)
	}
	if out, err := agentJob(t, a, up, src, "artifact", "upload", "scripts/*;helpers/*"); err != nil {
		t.Fatalf("artifact upload: %v\n%s", err, out)
	}
	got := a.Artifacts()
	if len(got) != len(files) {
		t.Fatalf("the stand-in holds %d artifacts, want %d", len(got), len(files))
	}
	for p, data := range files {
		if string(got[p]) != data {
			t.Errorf("artifact %s = %q, want %q", p, got[p], data)
		}
	}
	a.PutArtifact(other.ID, "scripts/other.sh", []byte("other\n"))

	for _, scope := range []string{up.StepKey, up.Label, up.ID} {
		dst := t.TempDir()
		if out, err := agentJob(t, a, step, dst, "artifact", "download", "scripts/b.sbatch", ".wlc", "--step", scope); err == nil {
			t.Fatalf("download into a missing directory succeeded:\n%s", out)
		}
		os.Mkdir(filepath.Join(dst, ".wlc"), 0o755)
		if out, err := agentJob(t, a, step, dst, "artifact", "download", "scripts/b.sbatch", ".wlc", "--step", scope); err != nil {
			t.Fatalf("artifact download --step %s: %v\n%s", scope, err, out)
		}
		if data, err := os.ReadFile(filepath.Join(dst, ".wlc", "scripts", "b.sbatch")); err != nil || string(data) != files["scripts/b.sbatch"] {
			t.Errorf("--step %s: downloaded %q (%v)", scope, data, err)
		}
		if entries, _ := os.ReadDir(filepath.Join(dst, ".wlc", "scripts")); len(entries) != 1 {
			t.Errorf("--step %s: %d files downloaded, want exactly the one asked for", scope, len(entries))
		}
	}
	dst := t.TempDir()
	if out, err := agentJob(t, a, step, dst, "artifact", "download", "scripts/other.sh", ".", "--step", up.StepKey); err == nil || !strings.Contains(out, "No artifacts found for downloading") {
		t.Errorf("another step's artifact was found: %v\n%s", err, out)
	}
	a.PutArtifact(up.ID, "scripts/a.sh", []byte("echo again\n"))
	if out, err := agentJob(t, a, step, dst, "artifact", "download", "scripts/a.sh", ".", "--step", up.StepKey); err != nil {
		t.Fatalf("artifact download: %v\n%s", err, out)
	}
	if data, _ := os.ReadFile(filepath.Join(dst, "scripts", "a.sh")); string(data) != "echo again\n" {
		t.Errorf("a re-uploaded path downloads %q, want the latest upload", data)
	}
	if u := a.Unhandled(); len(u) > 0 {
		t.Errorf("unhandled requests: %q", u)
	}
}

// TestAgentAPIPipelineLimit: the real agent's `pipeline upload` reaches the
// stand-in after its interpolation; 500 jobs pass, 501 are refused as
// Buildkite refuses them, and the agent fails.
func TestAgentAPIPipelineLimit(t *testing.T) {
	a := NewAgentAPI(t)
	up := Job{ID: "job-up", StepKey: "wlc-upload", Label: "upload"}
	a.AddJob(up)
	dir := t.TempDir()
	write := func(n int) string {
		var b strings.Builder
		b.WriteString("steps:\n")
		for i := range n {
			fmt.Fprintf(&b, "  - label: s%d\n    command: echo $$HOME %d\n", i, i)
		}
		p := filepath.Join(dir, fmt.Sprintf("p%d.yml", n))
		os.WriteFile(p, []byte(b.String()), 0o644)
		return p
	}
	if out, err := agentJob(t, a, up, dir, "pipeline", "upload", write(JobsPerUpload)); err != nil {
		t.Fatalf("pipeline upload of %d jobs: %v\n%s", JobsPerUpload, err, out)
	}
	ps := a.Pipelines()
	if len(ps) != 1 {
		t.Fatalf("%d pipelines recorded, want 1", len(ps))
	}
	var doc struct {
		Steps []struct {
			Command string `json:"command"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(ps[0], &doc); err != nil || len(doc.Steps) != JobsPerUpload || doc.Steps[1].Command != "echo $HOME 1" {
		t.Fatalf("recorded pipeline: %v, %d steps, %+v", err, len(doc.Steps), doc.Steps[:2])
	}
	out, err := agentJob(t, a, up, dir, "pipeline", "upload", write(JobsPerUpload+1))
	if err == nil || !strings.Contains(out, "exceeds your organization limit of 500") {
		t.Fatalf("pipeline upload of %d jobs: %v\n%s", JobsPerUpload+1, err, out)
	}
	if len(a.Pipelines()) != 1 {
		t.Error("the refused pipeline was recorded")
	}
}

// TestAgentAPIToken: a request with another agent token is refused (the
// agent itself would retry a refused search for 50 s, so plain HTTP asks).
func TestAgentAPIToken(t *testing.T) {
	a := NewAgentAPI(t)
	job := Job{ID: "job-1", StepKey: "k"}
	a.AddJob(job)
	a.PutArtifact(job.ID, "x", []byte("x"))
	url := a.srv.URL + "/v3/builds/" + AgentAPIBuild + "/artifacts/search?query=x&scope=k&state=finished"
	for token, want := range map[string]int{AgentAPIToken: http.StatusOK, "wrong": http.StatusUnauthorized} {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Authorization", "Token "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("token %s: HTTP %d, want %d", token, resp.StatusCode, want)
		}
	}
}
