package importer_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/backends/buildkite"
	"github.com/wlcdev/wlc/backends/goldentest"
	"github.com/wlcdev/wlc/backends/slurm"
	"github.com/wlcdev/wlc/internal/importer"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// pdStems are the corpus's PD-disaggregated (serving:) workloads.
var pdStems = []string{"kimi_k2_5_gb300_pd", "kimi_k3_gb300_pd", "kimi_k3_gb300_pd_dspark"}

// TestImportServing imports every serving: workload of the corpus: each
// vets clean against the bundled profiles and lowers through the slurm
// and buildkite backends (the only ones a Slurm profile allows), and
// Kimi-K2.5's instances and router ask for exactly what the hand port in
// testdata/backends/buildkite/gb300_pd.txtar asks for.
func TestImportServing(t *testing.T) {
	corpus := filepath.Join(testenv.SharedDir(t), "corpus", "perf-eval", "workloads")
	repo := testenv.RepoRoot(t)
	files := map[string][]byte{}
	for _, stem := range pdStems {
		data, err := os.ReadFile(filepath.Join(corpus, stem+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		r := importer.PerfEval(stem+".yaml", data)
		if r.Refused() {
			t.Fatalf("%s refused:\n%v", stem, r.Findings)
		}
		files[stem+".cue"] = r.Source
	}
	imp := importDir(t, repo, files)
	if imp.Diags.HasErrors() {
		t.Fatalf("imported PD workloads do not vet clean:\n%v", imp.Diags)
	}
	var plans []plan.Workload
	for _, stem := range pdStems {
		w, ok := imp.Workload(stem)
		if !ok {
			t.Fatalf("%s did not load", stem)
		}
		p, err := imp.Resolve(w, plan.Overrides{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Disagg == nil || len(p.Disagg.Instances) != 3 || p.GPUs != 12 {
			t.Errorf("%s: want 3 instances on 12 GPUs, got %+v GPUs %d", stem, p.Disagg, p.GPUs)
		}
		plans = append(plans, p)
	}
	for _, b := range []backends.Backend{slurm.New(), buildkite.New(map[string]backends.Backend{buildkite.RunnerSlurm: slurm.New()})} {
		if _, err := b.Lower(plans, backends.Options{}); err != nil {
			t.Errorf("%s: %v", b.Name(), err)
		}
	}

	// The hand port of Kimi-K2.5.
	_, ports := goldentest.Read(t, filepath.Join(repo, "testdata", "backends", "buildkite", "gb300_pd.txtar"))
	pw, _ := ports.Workload("kimi_k2_5_gb300_pd")
	port, err := ports.Resolve(pw, plan.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	got := plans[0]
	for i := range port.Disagg.Instances {
		if d := cmp.Diff(port.Disagg.Instances[i], got.Disagg.Instances[i]); d != "" {
			t.Errorf("instance %d differs from the hand port (-port +import):\n%s", i, d)
		}
	}
	if d := cmp.Diff(port.Disagg.Router, got.Disagg.Router); d != "" {
		t.Errorf("router differs from the hand port (-port +import):\n%s", d)
	}
	if got.Port != 31000 {
		t.Errorf("router port %d, want serving.router.port 31000", got.Port)
	}
}

func TestShellSplit(t *testing.T) {
	// perf-eval's PD parser read serve_args with shlex.split.
	got, err := importer.ShellSplit(`--a 1 --b '{"x": 1}' "c d" e\ f "g\"h"`)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"--a", "1", "--b", `{"x": 1}`, "c d", "e f", `g"h`}
	if d := cmp.Diff(want, got); d != "" {
		t.Error(d)
	}
	if _, err := importer.ShellSplit(`--a 'open`); err == nil {
		t.Error("an unclosed quote split without error")
	}
}

func TestServingRefusals(t *testing.T) {
	y := `gpu: GB300
num_gpus: 8
vllm: {model: org/M-FP8, serve_args: "-tp 4"}
vllm_bench: {configs: [{name: a, input_len: 8, output_len: 8, num_prompts: 4, max_concurrency: 4}]}
serving:
  version: 1
  mode: pd_disagg
  launcher: slurm
  common_serve_args: --port 9000
  roles:
    - {role: prefill, count: 1, nodes_per_instance: 1, gpus_per_node: 4, kv_role: kv_consumer}
    - {role: decode, count: 2, nodes_per_instance: 1, gpus_per_node: 4, tensor_parallel_size: 3}
  router: {repo_path: $WORK/router}
`
	r := importer.PerfEval("w.yaml", []byte(y))
	if !r.Refused() {
		t.Fatalf("imported:\n%s", r.Source)
	}
	var b strings.Builder
	for _, d := range r.Findings {
		b.WriteString(d.String() + "\n")
	}
	f := b.String()
	for _, want := range []string{
		"w.yaml:3:38: error: vllm.serve_args: vllm.serve_args must be empty with serving",
		"w.yaml:9:22: error: serving.common_serve_args: --port is set by the PD launcher",
		"error: serving.roles[0].kv_role: a prefill role's kv_role must be kv_producer",
		"error: serving.roles[1].tensor_parallel_size: tensor_parallel_size 3 must divide gpus_per_node 4",
	} {
		if !strings.Contains(f, want) {
			t.Errorf("missing %q in:\n%s", want, f)
		}
	}
}
