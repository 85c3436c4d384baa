package importer_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/backends/registry"
	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/internal/importer"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// corpusRefusals are the perf-eval workloads `wlc import perf-eval` still
// refuses, each with the reason (a piece of its error). Anything else in
// the corpus must import.
var corpusRefusals = map[string]string{}

// corpusShapes are the workloads that need backend_sweep, vllm_bench.sweep,
// idle_gpus, a custom_job or the SGLang engine: each must import with that shape and vet with no error
// but the listed real defects of the original.
var corpusShapes = map[string]struct {
	shape  string   // what the import must contain
	errors []string // vet errors (path suffix) that are the original's own defects
}{
	"attn_sweep_amd_gpt_oss_120b_mi355x.yaml":                 {`backend_sweep: attention: ["default", "TRITON_ATTN", "ROCM_AITER_FA", "ROCM_ATTN", "ROCM_AITER_UNIFIED_ATTN"]`, nil},
	"attn_sweep_amd_llama_31_70b_instruct_fp8_kv_mi355x.yaml": {`backend_sweep: attention: ["default", "ROCM_ATTN", "TRITON_ATTN", "ROCM_AITER_UNIFIED_ATTN", "ROCM_AITER_FA"]`, nil},
	"attn_sweep_deepseek_r1_0528_mi355x.yaml":                 {`backend_sweep: attention: ["default", "ROCM_AITER_MLA", "ROCM_AITER_TRITON_MLA"]`, nil},
	"attn_sweep_deepseek_r1_mxfp4_mi355x.yaml":                {`backend_sweep: attention: ["default", "ROCM_AITER_TRITON_MLA", "ROCM_AITER_MLA"]`, nil},
	"attn_sweep_glm_5_1_mi355x.yaml":                          {`backend_sweep: attention: ["default", "ROCM_AITER_TRITON_MLA", "ROCM_ATTN"]`, nil},
	"attn_sweep_gpt_oss_120b_mi355x.yaml":                     {`backend_sweep: attention: ["default", "ROCM_ATTN", "TRITON_ATTN", "ROCM_AITER_UNIFIED_ATTN", "ROCM_AITER_FA"]`, nil},
	"attn_sweep_kimi_k2_5_mi355x.yaml": {`backend_sweep: attention: ["default", "ROCM_AITER_TRITON_MLA", "ROCM_AITER_MLA", "ROCM_AITER_MLA_SPARSE"]`,
		[]string{"vllm_bench.configs[0].speed_bench_dataset_subset", "vllm_bench.configs[0].speed_bench_category"}},
	"attn_sweep_qwen3_5_397b_a17b_fp8_mix355x.yaml": {`backend_sweep: attention: ["default", "ROCM_ATTN", "TRITON_ATTN", "ROCM_AITER_UNIFIED_ATTN", "ROCM_AITER_FA"]`, nil},
	// Both reuse the name of attn_sweep_deepseek_r1_0528_mi355x /
	// attn_sweep_deepseek_r1_mxfp4_mi355x (a copy's leftover): their
	// results/ folders and dashboard rows would mix.
	"attn_sweep_triton_deepseek_r1_0528_mi355x.yaml":  {`backend_sweep: attention: ["TRITON_MLA"]`, []string{"dashboard_name"}},
	"attn_sweep_triton_deepseek_r1_mxfp4_mi355x.yaml": {`backend_sweep: attention: ["TRITON_MLA"]`, []string{"dashboard_name"}},
	"deepseek_r1_0528_tritonattnbackends_mi355x.yaml": {`backend_sweep: attention: ["default", "TRITON_MLA"]`, nil},
	"gpt_oss_120b_mi355x_attn_sweep.yaml":             {`backend_sweep: attention: ["default", "ROCM_AITER_UNIFIED_ATTN", "ROCM_AITER_FA", "TRITON_ATTN"]`, nil},
	"moe_sweep_amd_gpt_oss_120b_mi355x.yaml":          {`backend_sweep: moe: ["default", "aiter", "triton"]`, nil},
	"moe_sweep_deepseek_r1_0528_mi355x.yaml":          {`backend_sweep: moe: ["default"]`, nil},
	"moe_sweep_deepseek_r1_mxfp4_mi355x.yaml":         {`backend_sweep: moe: ["default"]`, nil},
	"moe_sweep_gpt_oss_120b_mi355x.yaml":              {`backend_sweep: moe: ["default", "triton", "aiter"]`, nil},
	"gpt_oss_120b_h200_sweep.yaml":                    {`vllm_bench: sweep: {`, nil},
	// perf-eval's B300 branch ran these scripts in the server's place.
	"ac_glm52_b300_ablation_current.yaml": {"custom_job: {\n\t\tcommand: [\"bash\", \"manual/ac_glm52_b300_ablation.sh\"]\n\t\tenv: CUSTOM_GROUP: \"current\"\n\t}", nil},
	"ac_glm52_b300_ablation_rebased.yaml": {"custom_job: {\n\t\tcommand: [\"bash\", \"manual/ac_glm52_b300_ablation.sh\"]\n\t\tenv: CUSTOM_GROUP: \"rebased\"\n\t}", nil},
	"b300_host_diagnostic.yaml":           {"custom_job: {\n\t\twhere: \"host\"\n\t\tcommand: [\"bash\", \"manual/b300_host_diagnostic.sh\"]\n\t}", nil},
	"glm_5_2_sglang_b200.yaml":            {`engine:             "sglang"`, nil},
	"gemma_4_31b_it_h200.yaml":            {`idle_gpus: {count: 7, reason: "perf-eval reserved 8 GPUs for this TP×DP×PP = 1 server"}`, nil},
	"gpt_oss_120b_h200.yaml":              {`idle_gpus: {count: 4, reason: "perf-eval reserved 8 GPUs for this TP×DP×PP = 4 server"}`, nil},
	"minimax_m2_5_h200.yaml":              {`idle_gpus: {count: 4, reason: "perf-eval reserved 8 GPUs for this TP×DP×PP = 4 server"}`, nil},
	"minimax_m3_mi355x.yaml":              {`idle_gpus: {count: 4, reason: "perf-eval reserved 8 GPUs for this TP×DP×PP = 4 server"}`, nil},
	"minimax_m2_5_mi355x.yaml":            {`idle_gpus: {count: 4, reason: "perf-eval reserved 8 GPUs for this TP×DP×PP = 4 server"}`, nil},
	"deepseek_v4_1_flash_mi355x.yaml": {`idle_gpus: {count: 4, reason: "perf-eval reserved 8 GPUs for this TP×DP×PP = 4 server"}`,
		[]string{"vllm_bench.configs[0].speed_bench_dataset_subset", "vllm_bench.configs[0].speed_bench_category", "vllm_bench.configs[1].speed_bench_dataset_subset", "vllm_bench.configs[1].speed_bench_category"}},
}

// TestCorpusRefusals imports every perf-eval workload: the refused ones
// are exactly corpusRefusals, each for its reason.
func TestCorpusRefusals(t *testing.T) {
	corpus := filepath.Join(testenv.SharedDir(t), "corpus", "perf-eval", "workloads")
	got := map[string]string{}
	n := 0
	err := filepath.WalkDir(corpus, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		rel, _ := filepath.Rel(corpus, path)
		r := importer.PerfEval(rel, data)
		if r.Refused() {
			var msgs []string
			for _, d := range r.Findings {
				if d.Severity == diag.Error {
					msgs = append(msgs, d.Message)
				}
			}
			got[filepath.ToSlash(rel)] = strings.Join(msgs, "\n")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Fatalf("only %d perf-eval workloads in %s", n, corpus)
	}
	var gotKeys, wantKeys []string
	for k := range got {
		gotKeys = append(gotKeys, k)
	}
	for k := range corpusRefusals {
		wantKeys = append(wantKeys, k)
	}
	sort.Strings(gotKeys)
	sort.Strings(wantKeys)
	if d := cmp.Diff(wantKeys, gotKeys); d != "" {
		t.Errorf("refused workloads differ from corpusRefusals (-want +got):\n%s", d)
	}
	for k, why := range corpusRefusals {
		if msg, ok := got[k]; ok && !strings.Contains(msg, why) {
			t.Errorf("%s refused for:\n%s\nwant the reason %q", k, msg, why)
		}
	}
}

// TestCorpusShapes imports the sweeps, the bench sweep and the whole-node
// reservations, vets them together and lowers each through the backends
// its profile allows.
func TestCorpusShapes(t *testing.T) {
	corpus := filepath.Join(testenv.SharedDir(t), "corpus", "perf-eval", "workloads")
	repo := testenv.RepoRoot(t)
	files := map[string][]byte{}
	for f, want := range corpusShapes {
		data, err := os.ReadFile(filepath.Join(corpus, f))
		if err != nil {
			t.Fatal(err)
		}
		r := importer.PerfEval(f, data)
		if r.Refused() {
			t.Errorf("%s refused: %v", f, r.Findings)
			continue
		}
		if !strings.Contains(string(r.Source), want.shape) {
			t.Errorf("%s: the import lacks %s:\n%s", f, want.shape, r.Source)
		}
		files[importer.KeyFor(f)+".cue"] = r.Source
	}
	res := importDir(t, repo, files)
	var gotErrs []string
	for _, d := range res.Diags.Sorted() {
		if d.Severity == diag.Error {
			gotErrs = append(gotErrs, d.Path)
		}
	}
	var wantErrs []string
	for f, want := range corpusShapes {
		for _, e := range want.errors {
			wantErrs = append(wantErrs, "workloads."+importer.KeyFor(f)+"."+e)
		}
	}
	sort.Strings(gotErrs)
	sort.Strings(wantErrs)
	if d := cmp.Diff(wantErrs, gotErrs); d != "" {
		t.Errorf("vet errors differ from the originals' listed defects (-want +got):\n%s\n%v", d, res.Diags)
	}
	for f := range corpusShapes {
		key := importer.KeyFor(f)
		w, ok := res.Workload(key)
		if !ok {
			continue // refused by vet for a listed defect
		}
		p, err := res.Resolve(w, plan.Overrides{})
		if err != nil {
			t.Errorf("%s: %v", key, err)
			continue
		}
		if strings.Contains(corpusShapes[f].shape, "backend_sweep") && (p.Sweep == nil || len(p.Sweep.Runs) == 0) {
			t.Errorf("%s: the plan has no backend sweep", key)
		}
		if strings.Contains(corpusShapes[f].shape, "idle_gpus") && p.IdleGPUs == 0 {
			t.Errorf("%s: the plan has no idle GPUs", key)
		}
		if slices.Contains([]string{"gpt_oss_120b_h200_sweep"}, key) && len(p.Bench) != 12 {
			t.Errorf("%s: %d bench runs, want 2 shapes × 6 concurrencies", key, len(p.Bench))
		}
		lowered := 0
		for _, b := range registry.All() {
			if a, ok := b.(backends.Accepter); ok && a.Accepts(p) != nil {
				continue
			}
			arts, err := b.Lower([]plan.Workload{p}, backends.Options{})
			if err != nil || len(arts) == 0 {
				t.Errorf("%s through %s: %v", key, b.Name(), err)
			}
			lowered++
		}
		if lowered < 2 {
			t.Errorf("%s lowers through %d backends, want its runner and buildkite", key, lowered)
		}
	}
}
