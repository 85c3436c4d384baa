package load_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"cuelang.org/go/cue/cuecontext"
	"github.com/google/go-cmp/cmp"

	"github.com/wlcdev/wlc/internal/load"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// recipePorts are the bundled workloads (workloads/) that
// testdata/recipe-workloads derives from their vLLM recipe instead of
// spelling every flag, with the rendering each one uses.
//
// Not ported, because the perf-eval port contradicts its recipe (so no
// recipe reference can render the same argv without bending it):
//   - deepseek_v4_flash_gb300_slurm (a seed): TP=2 × DP=4 over 2 GB300
//     nodes, but the recipe's only multi-node strategy, multi_node_dep,
//     renders DP=8 (TP=1) with --data-parallel-hybrid-lb, a compilation
//     config and --reasoning-config, none of which the port passes
//     (TestRecipeRefContradiction loads that port and checks the error);
//   - deepseek_v4_flash_b200: TP=2 × DP=4 against TEP's TP=8 (DEP forces
//     DP=4 on 4 GPUs), and no --reasoning-config;
//   - deepseek_v4_pro_5_h200: the hopper override gives max_model_len
//     200000 and max_num_seqs 16 against the port's 32768 and 512;
//   - qwen3_5_h200, qwen3_5_mi355x: the FP8 checkpoint is no variant of
//     the recipe (model contradicts);
//   - gpt_oss_120b_h200 (TP=4 against the recipe's TP=1),
//     minimax_m3_b200 (TP=2 against TP=8), minimax_m2_5_* (TP and the
//     recipe's tuning flags), nemotron_3_super_5_h200 (qwen3_coder against
//     the recipe's qwen3_xml parser), glm_5_1_h200 (the recipe passes
//     --trust-remote-code, the port does not), kimi_k2_5_mi3*x,
//     gpt_oss_120b_mi355x, glm_5_2_mi355x, deepseek_v4_pro_mi355x,
//     minimax_m3_mi355x (the AMD overrides add env or flags the ports do
//     not pass);
//   - glm_5_3_*, kimi_k3_mi355x, deepseek_v4_1_flash_mi355x: no recipe in
//     the corpus.
var recipePorts = map[string]plan.RecipeOrigin{
	"qwen3_5_b200":         {Recipe: "Qwen/Qwen3.5-397B-A17B", Variant: "nvfp4", Strategy: "single_node_tep", Hardware: "b200", Nodes: 1},
	"deepseek_v4_pro_b200": {Recipe: "deepseek-ai/DeepSeek-V4-Pro", Variant: "nvfp4", Strategy: "single_node_tep", Hardware: "b200", Nodes: 1},
	"gemma_4_31b_it_h200":  {Recipe: "Google/gemma-4-31B-it", Variant: "fp8", Strategy: "single_node_tp", Hardware: "h200", Nodes: 1},
	"kimi_k2_5_h200":       {Recipe: "moonshotai/Kimi-K2.5", Variant: "default", Strategy: "single_node_tp", Hardware: "h200", Nodes: 1},
	"minimax_m3_h200":      {Recipe: "MiniMaxAI/MiniMax-M3", Variant: "default", Strategy: "single_node_tp", Hardware: "h200", Nodes: 1},
	"gpt_oss_120b_b200":    {Recipe: "openai/gpt-oss-120b", Variant: "default", Strategy: "single_node_tp", Hardware: "b200", Nodes: 1},
}

func recipesDir(t *testing.T) string {
	return filepath.Join(testenv.SharedDir(t), "corpus", "recipes")
}

// TestRecipeRefsByteIdentical resolves every workload of
// testdata/recipe-workloads (recipe references) and its explicit port in
// workloads/, and requires the same `vllm serve` argv, byte for byte, and
// the same environment.
func TestRecipeRefsByteIdentical(t *testing.T) {
	dir := recipesDir(t)
	repo := testenv.RepoRoot(t)
	ctx := cuecontext.New()
	explicit := load.Load(ctx, filepath.Join(repo, "workloads"), repo)
	if explicit.Diags.HasErrors() {
		t.Fatalf("workloads/:\n%s", strings.Join(diagLines(explicit), "\n"))
	}
	root := filepath.Join(repo, "testdata", "recipe-workloads")
	derived := load.Load(ctx, filepath.Join(root, "workloads"), root, load.Options{RecipesDir: dir})
	if len(derived.Diags) > 0 {
		t.Fatalf("testdata/recipe-workloads: want no findings, got:\n%s", strings.Join(diagLines(derived), "\n"))
	}
	var names []string
	for _, w := range derived.Workloads {
		names = append(names, w.Name)
	}
	var want []string
	for n := range recipePorts {
		want = append(want, n)
	}
	sort.Strings(want)
	if diff := cmp.Diff(want, names); diff != "" {
		t.Fatalf("recipe-referencing workloads (-want +got):\n%s", diff)
	}
	resolve := func(r *load.Result, w load.Workload) plan.Workload {
		t.Helper()
		p, err := r.Resolve(w, plan.Overrides{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, dw := range derived.Workloads {
		t.Run(dw.Name, func(t *testing.T) {
			if dw.Workload.Recipe == nil || dw.Recipe == nil {
				t.Fatalf("%s does not reference a recipe", dw.Name)
			}
			ew, ok := explicit.Workload(dw.Name)
			if !ok {
				t.Fatalf("no explicit port %s in workloads/", dw.Name)
			}
			if ew.Workload.Recipe != nil {
				t.Fatalf("workloads/%s must stay explicit (vetted without recipes)", dw.Name)
			}
			got, exp := resolve(derived, dw), resolve(explicit, ew)
			if diff := cmp.Diff(exp.Serve.Args, got.Serve.Args); diff != "" {
				t.Errorf("vllm serve argv (-explicit +recipe):\n%s", diff)
			}
			if diff := cmp.Diff(exp.Env, got.Env); diff != "" {
				t.Errorf("env (-explicit +recipe):\n%s", diff)
			}
			if diff := cmp.Diff(exp.Serve, got.Serve); diff != "" {
				t.Errorf("serve (-explicit +recipe):\n%s", diff)
			}
			for _, f := range []struct{ name, exp, got string }{{"model", exp.Model, got.Model}, {"precision", exp.Precision, got.Precision}} {
				if f.exp != f.got {
					t.Errorf("%s: explicit %q, recipe %q", f.name, f.exp, f.got)
				}
			}
			o := *dw.Recipe
			wantO := recipePorts[dw.Name]
			if o.Recipe != wantO.Recipe || o.Variant != wantO.Variant || o.Strategy != wantO.Strategy || o.Hardware != wantO.Hardware || o.Nodes != wantO.Nodes {
				t.Errorf("rendering: got %s %s %s on %s × %d, want %s %s %s on %s × %d", o.Recipe, o.Variant, o.Strategy, o.Hardware, o.Nodes,
					wantO.Recipe, wantO.Variant, wantO.Strategy, wantO.Hardware, wantO.Nodes)
			}
		})
	}
}

// recipeLines loads files with the corpus recipes and returns the findings
// with the recipes directory written as RECIPES.
func recipeLines(t *testing.T, files map[string]string, withRecipes bool) []string {
	t.Helper()
	root := writePkg(t, files)
	var opts load.Options
	if withRecipes {
		opts.RecipesDir = recipesDir(t)
	}
	r := load.Load(cuecontext.New(), filepath.Join(root, "workloads"), root, opts)
	var out []string
	for _, l := range diagLines(r) {
		if withRecipes {
			l = strings.ReplaceAll(l, opts.RecipesDir, "RECIPES")
		}
		out = append(out, l)
	}
	return out
}

// TestRecipeRefContradiction: a written value that differs from the
// recipe's is an error at the workload's value naming the recipe's
// file:line:col; an equal one, or one the recipe does not set, is fine.
func TestRecipeRefContradiction(t *testing.T) {
	qwen := `	profile:       "B200"
	gpus_per_node: 8
	recipe: {
		model:    "Qwen/Qwen3.5-397B-A17B"
		variant:  "nvfp4"
		strategy: "single_node_tep"
	}
	vllm_bench: configs: [{name: "b", input_len: 8, output_len: 8, num_prompts: 8, max_concurrency: 8}]
`
	for _, c := range []struct {
		name   string
		fields string
		want   []string
	}{
		{
			name:   "agreeing and added values",
			fields: qwen + "\tmodel: \"nvidia/Qwen3.5-397B-A17B-NVFP4\"\n\tserve: {tensor_parallel_size: 8, kv_cache_dtype: \"fp8\", max_num_seqs: 64}\n\tenv: {VLLM_USE_DEEP_GEMM: \"0\", EXTRA: \"1\"}\n",
		},
		{
			name:   "tensor parallel size",
			fields: qwen + "\tserve: tensor_parallel_size: 4\n",
			want: []string{
				`workloads/w.cue:12:31: error: workloads.w.serve.tensor_parallel_size: 4 contradicts the recipe Qwen/Qwen3.5-397B-A17B (variant nvfp4, strategy single_node_tep on b200 gives --tensor-parallel-size 8 from computed parallelism (single_node_tep) at RECIPES/strategies/single_node_tep.yaml:19:1); remove it, or pick another variant, strategy or features`,
			},
		},
		{
			name:   "model, precision, parser, env and extra_args",
			fields: qwen + "\tmodel: \"Qwen/Qwen3.5-397B-A17B\"\n\tprecision: \"bf16\"\n\tenv: VLLM_USE_DEEP_GEMM: \"1\"\n\tserve: {tool_call_parser: \"hermes\", extra_args: [\"--mm-encoder-tp-mode\", \"weights\"]}\n",
			want: []string{
				`workloads/w.cue:12:9: error: workloads.w.model: "Qwen/Qwen3.5-397B-A17B" contradicts the recipe Qwen/Qwen3.5-397B-A17B (variant nvfp4, strategy single_node_tep on b200 gives nvidia/Qwen3.5-397B-A17B-NVFP4 from the variant's checkpoint at RECIPES/models/Qwen/Qwen3.5-397B-A17B.yaml:73:5); remove it, or pick another variant, strategy or features`,
				`workloads/w.cue:13:13: error: workloads.w.precision: "bf16" contradicts the recipe Qwen/Qwen3.5-397B-A17B (variant nvfp4, strategy single_node_tep on b200 gives precision: nvfp4 from variant nvfp4 at RECIPES/models/Qwen/Qwen3.5-397B-A17B.yaml:74:5); remove it, or pick another variant, strategy or features`,
				`workloads/w.cue:14:27: error: workloads.w.env.VLLM_USE_DEEP_GEMM: "1" contradicts the recipe Qwen/Qwen3.5-397B-A17B (variant nvfp4, strategy single_node_tep on b200 gives VLLM_USE_DEEP_GEMM=0 from model.base_env at RECIPES/models/Qwen/Qwen3.5-397B-A17B.yaml:33:5); remove it, or pick another variant, strategy or features`,
				`workloads/w.cue:15:28: error: workloads.w.serve.tool_call_parser: "hermes" contradicts the recipe Qwen/Qwen3.5-397B-A17B (variant nvfp4, strategy single_node_tep on b200 gives --tool-call-parser qwen3_coder from features.tool_calling.args at RECIPES/models/Qwen/Qwen3.5-397B-A17B.yaml:41:9); remove it, or pick another variant, strategy or features`,
				`workloads/w.cue:15:51: error: workloads.w.serve.extra_args[0]: --mm-encoder-tp-mode weights contradicts the recipe Qwen/Qwen3.5-397B-A17B (variant nvfp4, strategy single_node_tep on b200 gives --mm-encoder-tp-mode data from features.encoder_parallel.args at RECIPES/models/Qwen/Qwen3.5-397B-A17B.yaml:60:9); remove it, or pick another variant, strategy or features`,
			},
		},
		{
			// The seed deepseek_v4_flash_gb300_slurm as a recipe
			// reference: its TP=2 × DP=4 is not the recipe's multi-node DEP.
			name: "gb300 seed",
			fields: `	profile:       "GB300"
	nodes:         2
	gpus_per_node: 4
	bench_only:    true
	recipe: {model: "deepseek-ai/DeepSeek-V4-Flash", variant: "fp8", strategy: "multi_node_dep"}
	serve: {
		tensor_parallel_size: 2
		data_parallel_size:   4
	}
	vllm_bench: configs: [{name: "b", input_len: 8, output_len: 8, num_prompts: 8, max_concurrency: 8}]
`,
			want: []string{
				`workloads/w.cue:10:25: error: workloads.w.serve.tensor_parallel_size: 2 contradicts the recipe deepseek-ai/DeepSeek-V4-Flash (variant fp8, strategy multi_node_dep on gb300 gives --data-parallel-size 8 with tensor_parallel_size 1 from computed parallelism (multi_node_dep) at RECIPES/strategies/multi_node_dep.yaml:19:1); remove it, or pick another variant, strategy or features`,
				`workloads/w.cue:11:25: error: workloads.w.serve.data_parallel_size: 4 contradicts the recipe deepseek-ai/DeepSeek-V4-Flash (variant fp8, strategy multi_node_dep on gb300 gives --data-parallel-size 8 from computed parallelism (multi_node_dep) at RECIPES/strategies/multi_node_dep.yaml:19:1); remove it, or pick another variant, strategy or features`,
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := recipeLines(t, map[string]string{"workloads/w.cue": workload(c.fields)}, true)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRecipeRefNoRecipesDir: without a recipes directory, a workload with
// a recipe is one error naming the flag and variable to set, not a
// cascade of missing fields.
func TestRecipeRefNoRecipesDir(t *testing.T) {
	got := recipeLines(t, map[string]string{"workloads/w.cue": workload(`	profile:       "B200"
	gpus_per_node: 8
	recipe: model: "Qwen/Qwen3.5-397B-A17B"
	vllm_bench: configs: [{name: "b", input_len: 8, output_len: 8, num_prompts: 8, max_concurrency: 8}]
`), "workloads/ok.cue": workloadKey("ok", `	profile:       "B200"
	gpus_per_node: 1
	model:         "m"
	precision:     "bf16"
	vllm_bench: configs: [{name: "b", input_len: 8, output_len: 8, num_prompts: 8, max_concurrency: 8}]
`)}, false)
	want := []string{
		"workloads/w.cue:6:2: error: workloads.w.recipe: workload w derives from the recipe Qwen/Qwen3.5-397B-A17B, but no recipes directory is given: pass --recipes DIR (a github.com/vllm-project/recipes checkout: taxonomy.yaml, strategies/, models/), set WLC_RECIPES, or set settings.recipes in the workloads package",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}

// TestRecipeRefErrors: what cannot be derived is reported at the recipe
// field (with the recipe's own position), and a schema rule broken by a
// derived value names where the recipe sets it.
func TestRecipeRefErrors(t *testing.T) {
	bench := "\tvllm_bench: configs: [{name: \"b\", input_len: 8, output_len: 8, num_prompts: 8, max_concurrency: 8}]\n"
	for _, c := range []struct {
		name, fields string
		want         []string
	}{
		{
			name:   "unknown variant",
			fields: "\tprofile: \"B200\"\n\tgpus_per_node: 8\n\trecipe: {model: \"Qwen/Qwen3.5-397B-A17B\", variant: \"fp8\"}\n" + bench,
			want: []string{
				`workloads/w.cue:6:2: error: workloads.w.recipe: recipe Qwen/Qwen3.5-397B-A17B on b200: recipe Qwen/Qwen3.5-397B-A17B has no variant "fp8"; it has default, nvfp4, gptq_int4 (RECIPES/models/Qwen/Qwen3.5-397B-A17B.yaml:67:1)`,
			},
		},
		{
			name:   "unknown profile: one error, no cascade",
			fields: "\tprofile: \"NOPE\"\n\tgpus_per_node: 8\n\trecipe: model: \"Qwen/Qwen3.5-397B-A17B\"\n" + bench,
			want: []string{
				`workloads/w.cue:4:11: error: workloads.w.profile: unknown profile NOPE; known profiles: H200, B200, MI300X, GB300, B70`,
			},
		},
		{
			name:   "malformed recipe: one error, no cascade",
			fields: "\tprofile: \"B200\"\n\tgpus_per_node: 8\n\trecipe: \"Qwen/Qwen3.5-397B-A17B\"\n" + bench,
			want: []string{
				`workloads/w.cue:6:10: error: workloads.w.recipe: must be a struct, not the string "Qwen/Qwen3.5-397B-A17B"`,
			},
		},
		{
			name:   "multi-node strategy on one node",
			fields: "\tprofile: \"B200\"\n\tgpus_per_node: 8\n\trecipe: {model: \"Qwen/Qwen3.5-397B-A17B\", strategy: \"multi_node_tp\"}\n" + bench,
			want: []string{
				`workloads/w.cue:6:2: error: workloads.w.recipe: recipe Qwen/Qwen3.5-397B-A17B on b200: multi_node_tp spans nodes; --nodes must be at least 2 (RECIPES/strategies/multi_node_tp.yaml:2:1)`,
			},
		},
		{
			name:   "derived parallelism does not fit the reservation",
			fields: "\tprofile: \"B200\"\n\tgpus_per_node: 6\n\trecipe: {model: \"Qwen/Qwen3.5-397B-A17B\", variant: \"nvfp4\", strategy: \"single_node_tep\"}\n" + bench,
			want: []string{
				`workloads/w.cue:5:17: error: workloads.w.gpus_per_node: tensor_parallel_size × data_parallel_size × pipeline_parallel_size = 8 × 1 × 1 = 8, but the job reserves nodes × gpus_per_node = 1 × 6 = 6 GPUs; make nodes × gpus_per_node equal 8 or change the parallel sizes so every reserved GPU is used`,
				`workloads/w.cue:6:2: error: workloads.w.serve.tensor_parallel_size: tensor_parallel_size 8 spans nodes but is not a multiple of gpus_per_node 6; a multi-node tensor-parallel group must use whole nodes; derived from the recipe Qwen/Qwen3.5-397B-A17B (variant nvfp4, strategy single_node_tep on b200 gives --tensor-parallel-size 8 from computed parallelism (single_node_tep) at RECIPES/strategies/single_node_tep.yaml:19:1)`,
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := recipeLines(t, map[string]string{"workloads/w.cue": workload(c.fields)}, true)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

// BenchmarkLoadRecipeRefs loads 120 recipe-derived workloads. Each
// derivation used to FillPath the whole package, so loading was quadratic
// (126 workloads: 45 s, 5.8 GB); the fills are now one step.
func BenchmarkLoadRecipeRefs(b *testing.B) {
	recipes := filepath.Join(testenv.SharedDir(b), "corpus", "recipes")
	src := filepath.Join(testenv.RepoRoot(b), "testdata", "recipe-workloads")
	dir := b.TempDir()
	for _, f := range []string{"cue.mod/module.cue", "workloads/wlc.cue", "workloads/profiles.cue"} {
		testenv.CopyFile(b, filepath.Join(src, f), filepath.Join(dir, f))
	}
	one, err := os.ReadFile(filepath.Join(src, "workloads", "qwen3_5_b200.cue"))
	if err != nil {
		b.Fatal(err)
	}
	const n = 120
	for i := 0; i < n; i++ {
		data := strings.Replace(string(one), "workloads: qwen3_5_b200:", fmt.Sprintf("workloads: qwen3_5_b200_%03d:", i), 1)
		if err := os.WriteFile(filepath.Join(dir, "workloads", fmt.Sprintf("w%03d.cue", i)), []byte(data), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		r := load.Load(cuecontext.New(), filepath.Join(dir, "workloads"), dir, load.Options{RecipesDir: recipes})
		if len(r.Diags) != 0 || len(r.Workloads) != n {
			b.Fatalf("%d workloads, findings %v", len(r.Workloads), r.Diags)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/n, "ms/workload")
}
