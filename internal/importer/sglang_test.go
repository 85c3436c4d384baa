package importer_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/backends/buildkite"
	"github.com/wlcdev/wlc/backends/docker"
	"github.com/wlcdev/wlc/backends/native"
	"github.com/wlcdev/wlc/internal/engine/sglang"
	"github.com/wlcdev/wlc/internal/importer"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
	"github.com/wlcdev/wlc/schema"
)

// TestImportSGLang imports the corpus's SGLang workload: it vets clean
// against the bundled profiles, the server it asks SGLang for is the one
// perf-eval ran (every serve_args option with its value, as launch_server's
// parser reads both argv), its image and bench_serving runs are perf-eval's,
// and it lowers through every backend its docker profile allows.
func TestImportSGLang(t *testing.T) {
	corpus := filepath.Join(testenv.SharedDir(t), "corpus", "perf-eval", "workloads")
	repo := testenv.RepoRoot(t)
	const stem = "glm_5_2_sglang_b200"
	data, err := os.ReadFile(filepath.Join(corpus, stem+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r := importer.PerfEval(stem+".yaml", data)
	if r.Refused() {
		t.Fatalf("refused:\n%v", r.Findings)
	}
	imp := importDir(t, repo, map[string][]byte{stem + ".cue": r.Source})
	if imp.Diags.HasErrors() {
		t.Fatalf("the import does not vet clean:\n%v\n%s", imp.Diags, r.Source)
	}
	w, ok := imp.Workload(stem)
	if !ok {
		t.Fatal("the import did not load")
	}
	p, err := imp.Resolve(w, plan.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Engine != schema.EngineSGLang || !slices.Equal(p.Serve.Command, []string{"python3", "-m", "sglang.launch_server"}) {
		t.Errorf("engine %q command %q", p.Engine, p.Serve.Command)
	}
	if p.Image.Ref != "lmsysorg/sglang:latest" || p.Model != "/raid/inf-simon/models/zai-org/GLM-5.2-FP8" || p.Precision != "fp8" {
		t.Errorf("image %s model %s precision %s", p.Image.Ref, p.Model, p.Precision)
	}

	// perf-eval: --model-path <model> followed by serve_args word-split.
	original := "--model-path /raid/inf-simon/models/zai-org/GLM-5.2-FP8 " + serveArgs(t, data)
	if d := cmp.Diff(options(t, strings.Fields(original)), options(t, p.Serve.Args)); d != "" {
		t.Errorf("launch_server options differ from perf-eval's (-perf-eval +import):\n%s", d)
	}

	var runs []string
	for _, b := range p.Bench {
		runs = append(runs, b.Name)
		o := options(t, b.Args)
		for flag, want := range map[string]string{"--backend": "sglang", "--dataset-name": "random", "--random-range-ratio": "1.0", "--warmup-requests": "64", "--flush-cache": ""} {
			if got, ok := o[flag]; !ok || got != want {
				t.Errorf("%s: %s %q, want %q as perf-eval's run_sglang_bench", b.Name, flag, got, want)
			}
		}
	}
	if want := []string{"8k-in-1k-out-conc-64", "8k-in-1k-out-conc-256"}; !slices.Equal(runs, want) {
		t.Errorf("runs %v, want %v", runs, want)
	}
	for _, b := range []backends.Backend{docker.Backend{}, native.Backend{},
		buildkite.New(map[string]backends.Backend{buildkite.RunnerDocker: docker.Backend{}})} {
		if _, err := b.Lower([]plan.Workload{p}, backends.Options{}); err != nil {
			t.Errorf("%s: %v", b.Name(), err)
		}
	}
}

// serveArgs is the original's sglang.serve_args, folded as YAML folds it.
func serveArgs(t *testing.T, data []byte) string {
	t.Helper()
	var b strings.Builder
	in := false
	for _, l := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(l, "  serve_args:"):
			in = true
		case in && strings.HasPrefix(l, "    "):
			b.WriteString(strings.TrimSpace(l) + " ")
		case in:
			return b.String()
		}
	}
	t.Fatal("no sglang.serve_args")
	return ""
}

// options reads argv with launch_server's parser model: primary spelling
// -> value ("" for flags).
func options(t *testing.T, argv []string) map[string]string {
	t.Helper()
	tbl := sglang.LaunchServer
	if slices.Contains(argv, "--backend") {
		tbl = sglang.BenchServing
	}
	args, errs := tbl.Parse(argv)
	if len(errs) > 0 {
		t.Fatalf("%s refuses %q: %v", tbl.Prog, argv, errs)
	}
	out := map[string]string{}
	for _, a := range args {
		out[a.Option.Name()] = strings.Join(a.Values, " ")
	}
	return out
}
