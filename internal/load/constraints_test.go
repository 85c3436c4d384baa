package load_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A minimal valid workload on the H200 docker profile; cases change one
// thing at a time. h200Server is its server, lines 4 to 8 of w.cue, for
// cases that give their own benchmarks or evals.
const (
	h200Server = `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 8
`
	okBase = h200Server + `	lm_eval: tasks: [{name: "gsm8k"}]
`
)

// constraintCase is one rule: ok passes with no finding at all, bad gives
// exactly want (file:line:col: severity: path: message).
type constraintCase struct {
	name     string
	ok, bad  string // workload fields, see workload()
	profiles string // replaces testProfiles when set
	key      string // the bad workload's key; "w" when empty
	want     []string
}

var constraintCases = []constraintCase{
	{
		name: "precision/arch",
		ok: `	profile:       "B200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "nvfp4"
	serve: tensor_parallel_size: 8
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		bad: `	profile:       "MI300X"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "nvfp4"
	serve: tensor_parallel_size: 8
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		want: []string{
			"workloads/w.cue:7:17: error: workloads.w.precision: precision nvfp4 does not run on MI300X (gfx942, cdna3); vLLM runs it on H100, H200, B200, B300, GB200, GB300 (sm_90, sm_100, sm_103); use a checkpoint in one of bf16, fp16, fp8, int8, int4, mxfp4, mxfp4_fp8 or a profile with other hardware",
		},
	},
	{
		// NVFP4 on Hopper runs through FP4 Marlin weight-only: only when
		// the workload says so.
		name: "precision/fallback-unsaid",
		ok: `	profile:        "H200"
	gpus_per_node:  8
	model:          "org/model"
	precision:      "nvfp4"
	precision_path: "fallback"
	serve: tensor_parallel_size: 8
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		bad: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "nvfp4"
	serve: tensor_parallel_size: 8
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		want: []string{
			"workloads/w.cue:7:17: error: workloads.w.precision: precision nvfp4 has no native path on H200 (sm_90, hopper): vLLM runs it through a fallback kernel (FP4 Marlin weight-only NVFP4), so the benchmark would measure that kernel; set precision_path: \"fallback\" to run it anyway, or use a profile whose hardware runs nvfp4 natively (B200, B300, GB200, GB300)",
		},
	},
	{
		name: "precision/arch-fallback-allowed",
		ok: `	profile:        "H200"
	gpus_per_node:  8
	model:          "org/model"
	precision:      "mxfp4"
	precision_path: "fallback"
	serve: tensor_parallel_size: 8
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		bad: `	profile:       "MI300X"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "mxfp8"
	serve: tensor_parallel_size: 8
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		want: []string{
			"workloads/w.cue:7:17: error: workloads.w.precision: precision mxfp8 does not run on MI300X (gfx942, cdna3); vLLM runs it on B200, B300, GB200, GB300, MI355X (sm_100, sm_103, gfx950); use a checkpoint in one of bf16, fp16, fp8, int8, int4, mxfp4, mxfp4_fp8 or a profile with other hardware",
		},
	},
	{
		name: "precision/enum",
		ok:   okBase,
		bad: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "fp4"
	serve: tensor_parallel_size: 8
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		want: []string{
			"workloads/w.cue:7:17: error: workloads.w.precision: precision must be one of bf16, fp16, fp8, int8, int4, nvfp4, mxfp4, mxfp8, mxfp4_fp8; did you mean nvfp4 or mxfp4?",
		},
	},
	{
		name: "kv_cache_dtype/arch",
		ok: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: {tensor_parallel_size: 8, kv_cache_dtype: "fp8"}
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		bad: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: {tensor_parallel_size: 8, kv_cache_dtype: "nvfp4"}
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		want: []string{
			"workloads/w.cue:8:51: error: workloads.w.serve.kv_cache_dtype: kv_cache_dtype nvfp4 is not supported on H200 (sm_90); choose one of auto, bfloat16, float16, fp8, fp8_e4m3, fp8_e5m2, fp8_ds_mla",
		},
	},
	{
		name: "kv_cache_dtype/enum",
		ok:   okBase,
		bad: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: {tensor_parallel_size: 8, kv_cache_dtype: "int8"}
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		want: []string{
			"workloads/w.cue:8:51: error: workloads.w.serve.kv_cache_dtype: kv_cache_dtype must be one of auto, bfloat16, float16, fp8, fp8_e4m3, fp8_e5m2, fp8_ds_mla, fp8_inc, nvfp4",
		},
	},
	{
		name: "parallelism/product",
		ok: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: {tensor_parallel_size: 4, data_parallel_size: 2}
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		bad: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 4
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		want: []string{
			"workloads/w.cue:5:17: error: workloads.w.gpus_per_node: tensor_parallel_size × data_parallel_size × pipeline_parallel_size = 4 × 1 × 1 = 4, but the job reserves nodes × gpus_per_node = 1 × 8 = 8 GPUs; make nodes × gpus_per_node equal 4 or change the parallel sizes so every reserved GPU is used (or, to hold the GPUs on purpose, say so: idle_gpus: {count: 4, reason: \"...\"})",
		},
	},
	{
		name: "parallelism/tp-divides",
		ok: `	profile:       "H200"
	gpus_per_node: 6
	model:         "org/model"
	precision:     "bf16"
	serve: {tensor_parallel_size: 2, data_parallel_size: 3}
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		bad: `	profile:       "H200"
	gpus_per_node: 6
	model:         "org/model"
	precision:     "bf16"
	serve: {tensor_parallel_size: 4, pipeline_parallel_size: 1, data_parallel_size: 1}
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		want: []string{
			"workloads/w.cue:5:17: error: workloads.w.gpus_per_node: tensor_parallel_size × data_parallel_size × pipeline_parallel_size = 4 × 1 × 1 = 4, but the job reserves nodes × gpus_per_node = 1 × 6 = 6 GPUs; make nodes × gpus_per_node equal 4 or change the parallel sizes so every reserved GPU is used (or, to hold the GPUs on purpose, say so: idle_gpus: {count: 2, reason: \"...\"})",
			"workloads/w.cue:8:32: error: workloads.w.serve.tensor_parallel_size: tensor_parallel_size 4 does not divide gpus_per_node 6; a tensor-parallel group must tile each node (use a divisor of 6)",
		},
	},
	{
		name: "parallelism/multi-node-tp-whole-nodes",
		ok: `	profile:       "GB300"
	nodes:         2
	gpus_per_node: 4
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 8
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		bad: `	profile:       "GB300"
	nodes:         2
	gpus_per_node: 4
	model:         "org/model"
	precision:     "bf16"
	serve: {tensor_parallel_size: 6, pipeline_parallel_size: 1}
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		want: []string{
			"workloads/w.cue:6:17: error: workloads.w.gpus_per_node: tensor_parallel_size × data_parallel_size × pipeline_parallel_size = 6 × 1 × 1 = 6, but the job reserves nodes × gpus_per_node = 2 × 4 = 8 GPUs; make nodes × gpus_per_node equal 6 or change the parallel sizes so every reserved GPU is used (or, to hold the GPUs on purpose, say so: idle_gpus: {count: 2, reason: \"...\"})",
			"workloads/w.cue:9:32: error: workloads.w.serve.tensor_parallel_size: tensor_parallel_size 6 spans nodes but is not a multiple of gpus_per_node 4; a multi-node tensor-parallel group must use whole nodes",
		},
	},
	{
		name: "gpus_per_node/hardware",
		ok:   okBase,
		bad: `	profile:       "H200"
	gpus_per_node: 16
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 16
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		want: []string{
			"workloads/w.cue:5:17: error: workloads.w.gpus_per_node: gpus_per_node is 16 but a H200 node has 8 GPUs; use at most 8 per node (add nodes on Slurm for more)",
		},
	},
	{
		name: "expert_parallel/single-gpu",
		ok: `	profile:       "H200"
	gpus_per_node: 2
	model:         "org/model"
	precision:     "bf16"
	serve: {tensor_parallel_size: 2, enable_expert_parallel: true}
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		bad: `	profile:       "H200"
	gpus_per_node: 1
	model:         "org/model"
	precision:     "bf16"
	serve: {tensor_parallel_size: 1, enable_expert_parallel: true}
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		want: []string{
			"workloads/w.cue:8:59: error: workloads.w.serve.enable_expert_parallel: enable_expert_parallel needs more than one GPU (tensor_parallel_size × data_parallel_size is 1); raise the parallel sizes or drop expert parallelism",
		},
	},
	{
		name: "nodes/runtime",
		ok: `	profile:       "GB300"
	nodes:         2
	gpus_per_node: 4
	model:         "org/model"
	precision:     "bf16"
	serve: {tensor_parallel_size: 4, pipeline_parallel_size: 2}
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		bad: `	profile:       "H200"
	nodes:         2
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: {tensor_parallel_size: 8, pipeline_parallel_size: 2}
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		want: []string{
			"workloads/w.cue:5:17: error: workloads.w.nodes: nodes is 2 but profile H200 uses the docker runtime, which runs one node (a pod or a docker host); use 1 node or a slurm profile",
		},
	},
	{
		name: "nodes/max_nodes",
		ok: `	profile:       "GB300"
	nodes:         2
	gpus_per_node: 4
	model:         "org/model"
	precision:     "bf16"
	serve: {tensor_parallel_size: 4, data_parallel_size: 2}
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		bad: `	profile:       "GB300"
	nodes:         4
	gpus_per_node: 4
	model:         "org/model"
	precision:     "bf16"
	serve: {tensor_parallel_size: 4, data_parallel_size: 4}
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		want: []string{
			"workloads/w.cue:5:17: error: workloads.w.nodes: nodes is 4 but profile GB300 allows at most 2 nodes per job; use fewer nodes or raise slurm.max_nodes",
		},
	},
	{
		name: "nodes/idle",
		ok: `	profile:       "GB300"
	nodes:         2
	gpus_per_node: 4
	model:         "org/model"
	precision:     "bf16"
	serve: {tensor_parallel_size: 4, pipeline_parallel_size: 2}
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		bad: `	profile:       "GB300"
	nodes:         2
	gpus_per_node: 4
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 4
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		want: []string{
			"workloads/w.cue:5:17: error: workloads.w.nodes: nodes is 2 but the server's parallel sizes fit on one node; a multi-node server needs tensor, pipeline or data parallelism across nodes",
			"workloads/w.cue:6:17: error: workloads.w.gpus_per_node: tensor_parallel_size × data_parallel_size × pipeline_parallel_size = 4 × 1 × 1 = 4, but the job reserves nodes × gpus_per_node = 2 × 4 = 8 GPUs; make nodes × gpus_per_node equal 4 or change the parallel sizes so every reserved GPU is used (or, to hold the GPUs on purpose, say so: idle_gpus: {count: 4, reason: \"...\"})",
		},
	},
	{
		name: "bench_only/lm_eval",
		ok: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	bench_only:    true
	serve: tensor_parallel_size: 8
	vllm_bench: configs: [{name: "c", input_len: 8, output_len: 8, max_concurrency: 4, num_prompts: 8}]
`,
		bad: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	bench_only:    true
	serve: tensor_parallel_size: 8
	vllm_bench: configs: [{name: "c", input_len: 8, output_len: 8, max_concurrency: 4, num_prompts: 8}]
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		want: []string{
			"workloads/w.cue:11:11: error: workloads.w.lm_eval: bench_only workloads run performance benchmarks only; remove lm_eval or set bench_only: false",
		},
	},
	{
		name: "bench_only/bfcl",
		ok: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: {tensor_parallel_size: 8, tool_call_parser: "hermes", enable_auto_tool_choice: true}
	vllm_bench: configs: [{name: "c", input_len: 8, output_len: 8, max_concurrency: 4, num_prompts: 8}]
	bfcl: test_categories: ["simple_python"]
`,
		bad: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	bench_only:    true
	serve: {tensor_parallel_size: 8, tool_call_parser: "hermes", enable_auto_tool_choice: true}
	vllm_bench: configs: [{name: "c", input_len: 8, output_len: 8, max_concurrency: 4, num_prompts: 8}]
	bfcl: test_categories: ["simple_python"]
`,
		want: []string{
			"workloads/w.cue:11:8: error: workloads.w.bfcl: bench_only workloads run performance benchmarks only; remove bfcl or set bench_only: false",
		},
	},
	{
		name: "eval/at-least-one",
		ok:   okBase,
		bad: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 8
`,
		want: []string{
			"workloads/w.cue:3:12: error: workloads.w: workload runs nothing: define at least one of lm_eval, vllm_bench, bfcl or custom_steps (or a custom_job in the server's place)",
		},
	},
	{
		name: "serve/auto-tool-choice-needs-parser",
		ok: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: {tensor_parallel_size: 8, enable_auto_tool_choice: true, tool_call_parser: "hermes"}
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		bad: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: {tensor_parallel_size: 8, enable_auto_tool_choice: true}
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		want: []string{
			"workloads/w.cue:8:60: error: workloads.w.serve.enable_auto_tool_choice: enable_auto_tool_choice needs serve.tool_call_parser (vLLM refuses to start without it)",
		},
	},
	{
		name: "vllm_bench/repetitions-odd",
		ok: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 8
	vllm_bench: configs: [{name: "c", input_len: 8, output_len: 8, max_concurrency: 4, num_prompts: 8, repetitions: 3}]
`,
		bad: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 8
	vllm_bench: configs: [{name: "c", input_len: 8, output_len: 8, max_concurrency: 4, num_prompts: 8, repetitions: 2}]
`,
		want: []string{
			"workloads/w.cue:9:114: error: workloads.w.vllm_bench.configs[0].repetitions: repetitions is 2; use an odd number so the median is one of the runs",
		},
	},
	{
		// A mistyped count is refused at its field; each repetition is a
		// planned result file, and this many exhausted the memory budget.
		name: "vllm_bench/repetitions-bound",
		ok: h200Server + `	vllm_bench: configs: [{name: "c", input_len: 8, output_len: 8, max_concurrency: 4, num_prompts: 8, repetitions: 99}]
`,
		bad: h200Server + `	vllm_bench: configs: [{name: "c", input_len: 8, output_len: 8, max_concurrency: 4, num_prompts: 8, repetitions: 33333333333}]
	vllm_bench: sweep: {shapes: [{input_len: 8, output_len: 8}], concurrency: [4], prompts_per_concurrency: 2, repetitions: 101}
`,
		want: []string{
			"workloads/w.cue:9:114: error: workloads.w.vllm_bench.configs[0].repetitions: must be at most 99, not 33333333333",
			"workloads/w.cue:10:122: error: workloads.w.vllm_bench.sweep.repetitions: must be at most 99, not 101",
		},
	},
	{
		name: "vllm_bench/num_prompts-list-needs-sweep",
		ok: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 8
	vllm_bench: configs: [{name: "c", input_len: 8, output_len: 8, max_concurrency: [4, 8], num_prompts: [8, 16]}]
`,
		bad: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 8
	vllm_bench: configs: [{name: "c", input_len: 8, output_len: 8, max_concurrency: 4, num_prompts: [8, 16]}]
`,
		want: []string{
			"workloads/w.cue:9:85: error: workloads.w.vllm_bench.configs[0].num_prompts: num_prompts is a list but max_concurrency is a single value; give one num_prompts or make max_concurrency a sweep of the same length",
		},
	},
	{
		name: "vllm_bench/num_prompts-length",
		ok: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 8
	vllm_bench: configs: [{name: "c", input_len: 8, output_len: 8, max_concurrency: [4, 8], num_prompts: 16}]
`,
		bad: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 8
	vllm_bench: configs: [{name: "c", input_len: 8, output_len: 8, max_concurrency: [4, 8], num_prompts: [8, 16, 32]}]
`,
		want: []string{
			"workloads/w.cue:9:90: error: workloads.w.vllm_bench.configs[0].num_prompts: num_prompts has 3 entries but max_concurrency has 2; give one num_prompts per concurrency",
		},
	},
	{
		name: "vllm_bench/wrapper-owned-args",
		ok: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 8
	vllm_bench: configs: [{name: "c", input_len: 8, output_len: 8, max_concurrency: 4, num_prompts: 8, args: {"request-rate": 10}}]
`,
		bad: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 8
	vllm_bench: configs: [{name: "c", input_len: 8, output_len: 8, max_concurrency: 4, num_prompts: 8, args: {num_prompts: 10}}]
`,
		want: []string{
			"workloads/w.cue:9:121: error: workloads.w.vllm_bench.configs[0].args.num_prompts: bench arg num_prompts is set by wlc from the config's num_prompts; set that instead and remove num_prompts from args",
		},
	},
	{
		name: "vllm_bench/duplicate-run-names",
		ok: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 8
	vllm_bench: configs: [
		{name: "c", input_len: 8, output_len: 8, max_concurrency: 4, num_prompts: 8},
		{name: "c", input_len: 16, output_len: 8, max_concurrency: 8, num_prompts: 8},
	]
`,
		bad: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 8
	vllm_bench: configs: [
		{name: "c", input_len: 8, output_len: 8, max_concurrency: [4, 8], num_prompts: 8},
		{name: "c", input_len: 16, output_len: 8, max_concurrency: 8, num_prompts: 8},
	]
`,
		want: []string{
			"workloads/w.cue:11:10: error: workloads.w.vllm_bench.configs[1].name: run c-conc-8 is produced by configs[0] and configs[1]; give the configs different names or concurrencies",
		},
	},
	{
		// A sweep's configs are named by their shape: a shape listed twice
		// is one finding (not one per concurrency) at the second, and a
		// written config of a shape's name at the shape.
		name: "vllm_bench/sweep-unique-runs",
		ok: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 8
	vllm_bench: {
		configs: [{name: "isl8-osl8", input_len: 8, output_len: 8, max_concurrency: 2, num_prompts: 8}]
		sweep: {shapes: [{input_len: 8, output_len: 8}, {input_len: 16, output_len: 8}], concurrency: [4, 8], prompts_per_concurrency: 4}
	}
`,
		bad: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 8
	vllm_bench: {
		configs: [{name: "isl8-osl8", input_len: 8, output_len: 8, max_concurrency: 4, num_prompts: 8}]
		sweep: {shapes: [{input_len: 8, output_len: 8}, {input_len: 16, output_len: 8}, {input_len: 16, output_len: 8}], concurrency: [4, 8], prompts_per_concurrency: 4}
	}
`,
		want: []string{
			"workloads/w.cue:11:20: error: workloads.w.vllm_bench.sweep.shapes[0]: run isl8-osl8-conc-4 is produced by configs[0] and sweep.shapes[0]; give configs[0] another name",
			"workloads/w.cue:11:83: error: workloads.w.vllm_bench.sweep.shapes[2]: run isl16-osl8-conc-4 is produced by sweep.shapes[1] and sweep.shapes[2], the same input_len and output_len; list each shape once",
		},
	},
	{
		name: "vllm_bench/speed_bench-fields",
		ok: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 8
	vllm_bench: configs: [{name: "c", dataset: "speed_bench", speed_bench_category: "coding", input_len: 8, output_len: 8, max_concurrency: 4, num_prompts: 8}]
`,
		bad: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 8
	vllm_bench: configs: [{name: "c", speed_bench_category: "coding", input_len: 8, output_len: 8, max_concurrency: 4, num_prompts: 8}]
`,
		want: []string{
			"workloads/w.cue:9:58: error: workloads.w.vllm_bench.configs[0].speed_bench_category: speed_bench_category applies to dataset speed_bench only, but this config's dataset is random; set dataset: \"speed_bench\" or remove speed_bench_category",
		},
	},
	{
		// With a speed_bench field too, an unknown dataset is one error:
		// the field's refusal names the config's dataset, which it cannot.
		name: "vllm_bench/dataset-enum",
		ok: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 8
	vllm_bench: configs: [{name: "c", dataset: "random", input_len: 8, output_len: 8, max_concurrency: 4, num_prompts: 8}]
`,
		bad: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 8
	vllm_bench: configs: [{name: "c", dataset: "sharegpt", speed_bench_category: "coding", input_len: 8, output_len: 8, max_concurrency: 4, num_prompts: 8}]
`,
		want: []string{
			"workloads/w.cue:9:45: error: workloads.w.vllm_bench.configs[0].dataset: dataset must be random or speed_bench",
		},
	},
	{
		name: "vllm_bench/backend-enum",
		ok: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 8
	vllm_bench: configs: [{name: "c", backend: "openai-chat", input_len: 8, output_len: 8, max_concurrency: 4, num_prompts: 8}]
`,
		bad: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 8
	vllm_bench: configs: [{name: "c", backend: "tgi", input_len: 8, output_len: 8, max_concurrency: 4, num_prompts: 8}]
`,
		want: []string{
			"workloads/w.cue:9:45: error: workloads.w.vllm_bench.configs[0].backend: backend must be one of openai, openai-chat, vllm",
		},
	},
	{
		name: "vllm_bench/configs-empty",
		ok: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 8
	vllm_bench: configs: [{name: "c", input_len: 8, output_len: 8, max_concurrency: 4, num_prompts: 8}]
`,
		bad: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 8
	vllm_bench: configs: []
`,
		want: []string{
			"workloads/w.cue:9:14: error: workloads.w.vllm_bench.configs: vllm_bench has no configs; add at least one config (or a sweep) or remove vllm_bench",
		},
	},
	{
		name: "lm_eval/tasks-empty",
		ok:   okBase,
		bad: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 8
	lm_eval: tasks: []
`,
		want: []string{
			"workloads/w.cue:9:18: error: workloads.w.lm_eval.tasks: lm_eval has no tasks; add at least one task or remove lm_eval",
		},
	},
	{
		// wlc passes model and base_url itself; a workload's would be
		// dropped (and lm_eval takes model over pretrained).
		name: "lm_eval/model_args-owned",
		ok:   okBase,
		bad: h200Server + `	lm_eval: model_args: base_url: "http://other:8000/v1"
	lm_eval: tasks: [{name: "gsm8k", model_args: {model: "org/other", pretrained: "org/other", max_gen_toks: 64}}]
`,
		want: []string{
			"workloads/w.cue:9:33: error: workloads.w.lm_eval.model_args.base_url: model_args base_url is set by wlc to the address of the server the job starts; remove it",
			"workloads/w.cue:10:55: error: workloads.w.lm_eval.tasks[0].model_args.model: model_args model is set by wlc to the served model (the workload's model); remove it",
			"workloads/w.cue:10:80: error: workloads.w.lm_eval.tasks[0].model_args.pretrained: model_args pretrained is set by wlc to the served model (lm_eval takes model, which wlc sets, over pretrained); remove it",
		},
	},
	{
		// lm_eval int()s counts and lengths and reads switches by Python
		// truth; what it cannot use fails (or reads as true) only once
		// the eval starts. Numerals and "true"/"false" are what its
		// argument parser makes numbers and bools of.
		name: "lm_eval/model_args-kinds",
		ok: h200Server + `	lm_eval: model_args: {num_concurrent: 64, max_length: "8192", tokenized_requests: "False", tokenizer_backend: null, timeout: 600.0}
	lm_eval: tasks: [{name: "gsm8k", model_args: {max_gen_toks: 256, truncate: true, tokenizer_backend: "none", my_own: "anything"}}]
`,
		bad: h200Server + `	lm_eval: model_args: {num_concurrent: "sixty-four", max_length: null, tokenized_requests: "no"}
	lm_eval: tasks: [{name: "gsm8k", model_args: {max_gen_toks: 25.6, tokenizer_backend: "hf"}}]
`,
		want: []string{
			"workloads/w.cue:9:40: error: workloads.w.lm_eval.model_args.num_concurrent: model_args num_concurrent must be an integer (lm_eval takes int() of it), not \"sixty-four\"",
			"workloads/w.cue:9:66: error: workloads.w.lm_eval.model_args.max_length: model_args max_length must be an integer (lm_eval takes int() of it), not null",
			"workloads/w.cue:9:92: error: workloads.w.lm_eval.model_args.tokenized_requests: model_args tokenized_requests must be true or false (lm_eval reads any other value by Python truth), not \"no\"",
			"workloads/w.cue:10:62: error: workloads.w.lm_eval.tasks[0].model_args.max_gen_toks: model_args max_gen_toks must be an integer (lm_eval takes int() of it), not 25.6",
			"workloads/w.cue:10:87: error: workloads.w.lm_eval.tasks[0].model_args.tokenizer_backend: model_args tokenizer_backend must be huggingface, tiktoken, remote or null, not \"hf\"",
		},
	},
	{
		name: "bfcl/categories-empty",
		ok: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: {tensor_parallel_size: 8, tool_call_parser: "hermes"}
	bfcl: test_categories: ["simple_python"]
`,
		bad: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: {tensor_parallel_size: 8, tool_call_parser: "hermes"}
	bfcl: test_categories: []
`,
		want: []string{
			"workloads/w.cue:9:25: error: workloads.w.bfcl.test_categories: bfcl has no test_categories; add at least one category or remove bfcl",
		},
	},
	{
		name: "bfcl/category-enum",
		ok: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: {tensor_parallel_size: 8, tool_call_parser: "hermes"}
	bfcl: test_categories: ["multi_turn"]
`,
		bad: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: {tensor_parallel_size: 8, tool_call_parser: "hermes"}
	bfcl: test_categories: ["simple"]
`,
		want: []string{
			"workloads/w.cue:9:26: error: workloads.w.bfcl.test_categories[0]: unknown BFCL category; use one of simple_python, simple_java, simple_javascript, multiple, parallel, parallel_multiple, irrelevance, live_simple, live_multiple, live_parallel, live_parallel_multiple, live_irrelevance, live_relevance, multi_turn_base, multi_turn_miss_func, multi_turn_miss_param, multi_turn_long_context, memory_kv, memory_vector, memory_rec_sum, all, all_scoring, single_turn, multi_turn, live, non_live, non_python, python, memory, agentic",
		},
	},
	{
		name: "profile/unknown",
		ok:   okBase,
		bad: `	profile:       "H20"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 8
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		want: []string{
			"workloads/w.cue:4:17: error: workloads.w.profile: unknown profile H20; known profiles: H200, B200, MI300X, GB300, B70",
		},
	},
	{
		name: "env/name-pattern",
		ok: okBase + `	env: VLLM_LOGGING_LEVEL: "DEBUG"
`,
		bad: okBase + `	env: "VLLM-LOGGING": "DEBUG"
`,
		want: []string{
			"workloads/w.cue:10:7: error: workloads.w.env.\"VLLM-LOGGING\": field not allowed: VLLM-LOGGING is not a valid environment variable name; use letters, digits and _, not starting with a digit",
		},
	},
	{
		name: "env/secret",
		ok: okBase + `	env: HF_HUB_OFFLINE: "1"
`,
		bad: okBase + `	env: HF_TOKEN: "hf_abc"
`,
		want: []string{
			"workloads/w.cue:10:17: error: workloads.w.env.HF_TOKEN: HF_TOKEN is a secret; its value must not be written into generated files: remove it from env (secrets are passed by name from the job's environment)",
		},
	},
	{
		name: "env/workload-secret",
		ok: okBase + `	secrets: ["WANDB_API_KEY"]
`,
		bad: okBase + `	secrets: ["WANDB_API_KEY"]
	env: WANDB_API_KEY: "abc"
`,
		want: []string{
			"workloads/w.cue:11:22: error: workloads.w.env.WANDB_API_KEY: WANDB_API_KEY is a secret; its value must not be written into generated files: remove it from env (secrets are passed by name from the job's environment)",
		},
	},
	{
		name: "serve/extra_args-owns-typed-flag",
		ok: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: {tensor_parallel_size: 8, extra_args: ["--max-cudagraph-capture-size", "512"]}
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		bad: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: {tensor_parallel_size: 8, extra_args: ["--max_num_seqs=64"]}
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		want: []string{
			"workloads/w.cue:8:48: error: workloads.w.serve.extra_args[0]: --max_num_seqs=64 is set by serve.max_num_seqs; remove it from extra_args (the later flag would silently win)",
		},
	},
	{
		name: "name/pattern",
		ok:   okBase,
		bad:  okBase,
		key:  `"-w"`,
		want: []string{
			"workloads/w.cue:3:12: error: workloads.\"-w\".name: a name must start with a letter or digit and use only letters, digits, _, . and - (no ..)",
		},
	},
	{
		name: "required/nested",
		ok:   okBase,
		bad: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 8
	lm_eval: tasks: [{num_fewshot: 5}]
	vllm_bench: configs: [{name: "c", max_concurrency: 4, num_prompts: 8}]
`,
		want: []string{
			`workloads/w.cue:9:19: error: workloads.w.lm_eval.tasks[0]: required field missing: name; add it (name is the lm_eval task, e.g. "gsm8k")`,
			"workloads/w.cue:10:24: error: workloads.w.vllm_bench.configs[0]: required field missing: input_len; add it (input_len is the prompt length in tokens)",
			"workloads/w.cue:10:24: error: workloads.w.vllm_bench.configs[0]: required field missing: output_len; add it (output_len is how many tokens each request generates)",
		},
	},
	{
		name: "required/profile",
		ok:   okBase,
		bad:  okBase,
		profiles: `package workloads

profiles: H200: {docker: {}}
`,
		want: []string{
			"workloads/profiles.cue:3:11: error: profiles.H200: required field missing: hardware; add it (hardware is a key of the hardware catalog)",
			"workloads/profiles.cue:3:11: error: profiles.H200: required field missing: queue; add it (queue is the Buildkite agents.queue; <PROFILE>_QUEUE overrides it at export time)",
			"workloads/profiles.cue:3:11: error: profiles.H200: required field missing: runtime; add it (runtime is how the server starts on the machine a job lands on: docker, k8s or slurm (see #Runtime))",
		},
	},
	{
		name: "warning/bfcl-without-tool-parser",
		ok: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: {tensor_parallel_size: 8, tool_call_parser: "hermes"}
	bfcl: test_categories: ["simple_python"]
`,
		bad: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 8
	bfcl: test_categories: ["simple_python"]
`,
		want: []string{
			"workloads/w.cue:9:2: warning: workloads.w.bfcl: bfcl scores tool calls but serve.tool_call_parser is unset, so the server returns tool calls as plain text; set tool_call_parser (and enable_auto_tool_choice)",
		},
	},
	{
		name: "warning/num_prompts-waves",
		ok: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 8
	vllm_bench: configs: [{name: "c", input_len: 8, output_len: 8, max_concurrency: 128, num_prompts: 256}]
`,
		bad: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 8
	vllm_bench: configs: [{name: "c", input_len: 8, output_len: 8, max_concurrency: 128, num_prompts: 200}]
`,
		want: []string{
			"workloads/w.cue:9:100: warning: workloads.w.vllm_bench.configs[0].num_prompts: num_prompts 200 at max_concurrency 128 is not a whole number of waves: the last wave runs at concurrency 72 and skews throughput; use 128 or 256",
		},
	},
	{
		name: "warning/num_prompts-below-concurrency",
		ok: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 8
	vllm_bench: configs: [{name: "c", input_len: 8, output_len: 8, max_concurrency: [4, 8], num_prompts: [8, 8]}]
`,
		bad: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 8
	vllm_bench: configs: [{name: "c", input_len: 8, output_len: 8, max_concurrency: [4, 8], num_prompts: [8, 4]}]
`,
		want: []string{
			"workloads/w.cue:9:90: warning: workloads.w.vllm_bench.configs[0].num_prompts: num_prompts 4 at max_concurrency 8 is not a whole number of waves: the last wave runs at concurrency 4 and skews throughput; use 8",
			"workloads/w.cue:9:90: warning: workloads.w.vllm_bench.configs[0].num_prompts: num_prompts 4 is below max_concurrency 8, so the server never sees the requested concurrency",
		},
	},
	{
		name: "warning/model-id-precision",
		ok: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model-FP8"
	precision:     "fp8"
	serve: tensor_parallel_size: 8
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		bad: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model-FP8"
	precision:     "bf16"
	serve: tensor_parallel_size: 8
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		want: []string{
			"workloads/w.cue:7:17: warning: workloads.w.precision: model id org/model-FP8 looks like a fp8 checkpoint but precision is bf16; check which weights the checkpoint holds",
		},
	},
	{
		name: "memory/checkpoint_gib",
		ok: okBase + `	checkpoint_gib: 700
`,
		bad: okBase + `	checkpoint_gib: 1000
`,
		want: []string{
			"workloads/w.cue:10:18: error: workloads.w.checkpoint_gib: the weights need 1000 GiB × 1.2 headroom = 1200 GiB, but 8 × H200 hold 1123.2 GiB; reserve at least 9 GPUs, use a smaller checkpoint (lower precision) or lower memory_headroom",
		},
	},
	{
		name: "memory/params_b",
		ok: okBase + `	params_b: 400
`,
		bad: okBase + `	params_b: 600
`,
		want: []string{
			"workloads/w.cue:10:12: error: workloads.w.params_b: the weights need 1118 GiB × 1.2 headroom = 1341 GiB, but 8 × H200 hold 1123.2 GiB; reserve at least 10 GPUs, use a smaller checkpoint (lower precision) or lower memory_headroom",
		},
	},
	{
		name: "memory/headroom-range",
		ok: okBase + `	memory_headroom: 0.5
	params_b: 8
`,
		bad: okBase + `	memory_headroom: 5
`,
		want: []string{
			"workloads/w.cue:10:19: error: workloads.w.memory_headroom: must be at most 4, not 5",
		},
	},
	{
		name: "required/fields",
		ok:   okBase,
		bad: `	serve: tensor_parallel_size: 8
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		want: []string{
			"workloads/w.cue:3:12: error: workloads.w: required field missing: gpus_per_node; add it (gpus_per_node is how many GPUs the job reserves on each node)",
			"workloads/w.cue:3:12: error: workloads.w: required field missing: model; add it (model is a Hugging Face model id or a path inside the container)",
			"workloads/w.cue:3:12: error: workloads.w: required field missing: precision; add it (precision is the checkpoint's weight format; it must be one the hardware's architecture runs (see the hardware catalog))",
			"workloads/w.cue:3:12: error: workloads.w: required field missing: profile; add it (profile is a key of `profiles`: which fleet runs the workload)",
		},
	},
	{
		name: "model/pattern",
		ok:   okBase,
		bad: `	profile:       "H200"
	gpus_per_node: 8
	model:         "--model"
	precision:     "bf16"
	serve: tensor_parallel_size: 8
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		want: []string{
			"workloads/w.cue:6:17: error: workloads.w.model: model must be a Hugging Face id or a container path: not empty, not starting with -, no newline",
		},
	},
	{
		name: "image/no-space",
		ok: okBase + `	image: "vllm/vllm-openai:v0.11.0"
`,
		bad: okBase + `	image: "vllm/vllm-openai v0.11.0"
`,
		want: []string{
			"workloads/w.cue:10:9: error: workloads.w.image: image must be one image reference without spaces, e.g. vllm/vllm-openai:v0.11.0",
		},
	},
	{
		name: "port/range",
		ok: okBase + `	port: 8000
`,
		bad: okBase + `	port: 80
`,
		want: []string{
			"workloads/w.cue:10:8: error: workloads.w.port: port must be an integer from 1024 to 65535",
		},
	},
	{
		name: "type/mismatch",
		ok:   okBase,
		bad: `	profile:       "H200"
	gpus_per_node: "8"
	model:         "org/model"
	precision:     "bf16"
	serve: tensor_parallel_size: 8
	lm_eval: tasks: [{name: "gsm8k"}]
`,
		want: []string{
			"workloads/w.cue:5:17: error: workloads.w.gpus_per_node: must be an integer, not the string \"8\"; write 8",
		},
	},
	{
		// null is a value and a type: the user's null is what is wrong.
		name: "type/null",
		ok:   okBase,
		bad: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	description:   null
	precision:     "bf16"
	serve: tensor_parallel_size: 8
	lm_eval: tasks: null
`,
		want: []string{
			"workloads/w.cue:7:17: error: workloads.w.description: must be a string, not null",
			"workloads/w.cue:10:18: error: workloads.w.lm_eval.tasks: must be a list, not null",
		},
	},
	{
		name: "unknown-field/nested",
		ok:   okBase,
		bad: `	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: {tensor_parallel_size: 8, max_num_seq: 8}
	lm_eval: tasks: [{name: "gsm8k", fewshot: 5}]
`,
		want: []string{
			"workloads/w.cue:8:48: error: workloads.w.serve.max_num_seq: max_num_seq is no option of vllm serve in vLLM main-2026-08-17 (there is no --max-num-seq); did you mean max_num_seqs? [main-2026-08-17, the newest catalog, stands in for vllm/vllm-openai:nightly, which has no catalog of its own; add one or map the image in settings.vllm_flags.images (docs/flag-catalogs.md)]",
			"workloads/w.cue:9:35: error: workloads.w.lm_eval.tasks[0].fewshot: field not allowed: fewshot is not a field here; did you mean num_fewshot?",
		},
	},
	{
		name: "profile/hardware-unknown",
		ok:   okBase,
		bad:  okBase,
		profiles: `package workloads

profiles: H200: {hardware: "H300", runtime: "docker", queue: "h200", docker: {}}
`,
		want: []string{
			"workloads/profiles.cue:3:28: error: profiles.H200.hardware: hardware H300 is not in the catalog; use one of H100, H200, B200, B300, GB200, GB300, MI300X, MI325X, MI355X, ARC_PRO_B70",
		},
	},
	{
		name: "profile/runtime-enum",
		ok:   okBase,
		bad:  okBase,
		profiles: `package workloads

profiles: H200: {hardware: "H200", runtime: "podman", queue: "h200"}
`,
		want: []string{
			"workloads/profiles.cue:3:45: error: profiles.H200.runtime: runtime must be one of docker, k8s, slurm",
		},
	},
	{
		name: "profile/k8s-plugin-enum",
		ok:   okBase,
		bad:  okBase,
		profiles: `package workloads

profiles: H200: {hardware: "H200", runtime: "k8s", queue: "h200", k8s: plugin: "intel"}
`,
		want: []string{
			"workloads/profiles.cue:3:80: error: profiles.H200.k8s.plugin: k8s.plugin must be nvidia or amd",
		},
	},
	{
		name: "profile/secret-in-env",
		ok:   okBase,
		bad:  okBase,
		profiles: `package workloads

profiles: H200: {hardware: "H200", runtime: "docker", queue: "h200", docker: {}, env: HF_TOKEN: "hf_x"}
`,
		want: []string{
			"workloads/profiles.cue:3:97: error: profiles.H200.env.HF_TOKEN: HF_TOKEN is a secret of this profile; its value must not be written into generated files: remove it from env (it is passed by name from the agent's environment)",
		},
	},
	{
		name: "profile/runtime-block-mismatch",
		ok:   okBase,
		bad:  okBase,
		profiles: `package workloads

profiles: H200: {hardware: "H200", runtime: "docker", queue: "h200", slurm: max_nodes: 2}
`,
		want: []string{
			"workloads/profiles.cue:3:77: error: profiles.H200.slurm: slurm settings apply to runtime slurm, but this profile's runtime is docker; remove slurm or set runtime: \"slurm\"",
		},
	},
	{
		name: "profile/slurm-time",
		ok:   okBase,
		bad:  okBase,
		profiles: `package workloads

profiles: H200: {hardware: "H200", runtime: "slurm", queue: "h200", slurm: {max_nodes: 1, time_limit: "2h"}}
`,
		want: []string{
			"workloads/profiles.cue:3:103: error: profiles.H200.slurm.time_limit: time_limit must be minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS, e.g. \"02:00:00\"; 2h is \"02:00:00\" in Slurm's form",
		},
	},
	{
		name: "profile/pyxis-mount",
		ok:   okBase,
		bad:  okBase,
		profiles: `package workloads

profiles: H200: {hardware: "H200", runtime: "slurm", queue: "h200", slurm: {max_nodes: 1, pyxis: mounts: [{source: "/a,b", target: "relative"}]}}
`,
		want: []string{
			"workloads/profiles.cue:3:116: error: profiles.H200.slurm.pyxis.mounts[0].source: mount source must be an absolute path without commas, colons or whitespace (Pyxis splits its mount list on commas and colons, enroot's fstab line on whitespace)",
			"workloads/profiles.cue:3:132: error: profiles.H200.slurm.pyxis.mounts[0].target: mount target must be an absolute path without commas, colons or whitespace (Pyxis splits its mount list on commas and colons, enroot's fstab line on whitespace)",
		},
	},
	{
		name: "profile/gres",
		ok:   okBase,
		bad:  okBase,
		profiles: `package workloads

profiles: H200: {hardware: "H200", runtime: "slurm", queue: "h200", slurm: {max_nodes: 1, gres: "gpu:h200:0"}}
`,
		want: []string{
			"workloads/profiles.cue:3:97: error: profiles.H200.slurm.gres: cannot read the GPU count in gres \"gpu:h200:0\"; write gpu[:type]:N",
		},
	},
}

func TestConstraints(t *testing.T) {
	for _, c := range constraintCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			files := func(fields string, bad bool) map[string]string {
				m := map[string]string{"workloads/w.cue": workload(fields)}
				if c.key != "" && bad {
					m["workloads/w.cue"] = workloadKey(c.key, fields)
				}
				if c.profiles != "" && bad {
					m["workloads/profiles.cue"] = c.profiles
				}
				return m
			}
			if got := diagLines(loadPkg(t, writePkg(t, files(c.ok, false)))); len(got) != 0 {
				t.Errorf("ok case: want no findings, got:\n%s", strings.Join(got, "\n"))
			}
			if c.bad == "" {
				return
			}
			got := diagLines(loadPkg(t, writePkg(t, files(c.bad, true))))
			if os.Getenv("WLC_SHOW") != "" {
				var b strings.Builder
				for _, g := range got {
					fmt.Fprintf(&b, "\t%q,\n", g)
				}
				t.Logf("bad case findings:\n%s", b.String())
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("bad case findings (-want +got):\n%s", diff)
			}
		})
	}
}
