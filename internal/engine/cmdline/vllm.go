package cmdline

import (
	"github.com/wlcdev/wlc/internal/engine/vllmcatalog"
)

// VLLMServe is `vllm serve`: the options typed #Serve fields hold, in the
// order the plan renders them (parallelism first, then the rest as vLLM
// groups them), and the ones wlc or its runner set.
var VLLMServe = &Spec{
	Command: "vllm serve",
	Flags: []Flag{
		{Name: "--tensor-parallel-size", Kind: Int, Field: "serve.tensor_parallel_size", Default: 1},
		{Name: "--pipeline-parallel-size", Kind: Int, Field: "serve.pipeline_parallel_size", Default: 1},
		{Name: "--data-parallel-size", Kind: Int, Field: "serve.data_parallel_size", Default: 1},
		{Name: "--enable-expert-parallel", Kind: Bool, Field: "serve.enable_expert_parallel", Default: false},
		{Name: "--max-model-len", Kind: SizeOrAuto, Field: "serve.max_model_len"},
		{Name: "--max-num-seqs", Kind: Int, Field: "serve.max_num_seqs"},
		{Name: "--max-num-batched-tokens", Kind: Size, Field: "serve.max_num_batched_tokens"},
		{Name: "--gpu-memory-utilization", Kind: Float, Field: "serve.gpu_memory_utilization"},
		{Name: "--kv-cache-dtype", Kind: String, Field: "serve.kv_cache_dtype"},
		{Name: "--block-size", Kind: Int, Field: "serve.block_size"},
		{Name: "--enable-prefix-caching", Kind: Bool, Field: "serve.enable_prefix_caching"},
		{Name: "--trust-remote-code", Kind: Bool, Field: "serve.trust_remote_code", Default: false},
		{Name: "--tokenizer-mode", Kind: String, Field: "serve.tokenizer_mode"},
		{Name: "--language-model-only", Kind: Bool, Field: "serve.language_model_only", Default: false},
		{Name: "--moe-backend", Kind: String, Field: "serve.moe_backend"},
		{Name: "--tool-call-parser", Kind: String, Field: "serve.tool_call_parser", Optional: true},
		{Name: "--enable-auto-tool-choice", Kind: Bool, Field: "serve.enable_auto_tool_choice", Default: false},
		{Name: "--reasoning-parser", Kind: String, Field: "serve.reasoning_parser"},
		{Name: "--speculative-config", Kind: JSON, Field: "serve.speculative_config", Optional: true},
		{Name: "--compilation-config", Kind: JSON, Field: "serve.compilation_config"},
		{Name: "--attention-config", Kind: JSON, Field: "serve.attention_config"},
		{Name: "--kernel-config", Kind: JSON, Field: "serve.kernel_config"},

		{Name: "--model", Kind: String, Owner: "model"},
		{Name: "--port", Kind: Int, Owner: "the runner (each job picks a free port)"},
		{Name: "--host", Kind: String, Owner: "the runner"},
		// Multi-node launch: the runner starts every rank itself.
		{Name: "--nnodes", Kind: Int, Owner: "the runner (from nodes)", Launch: true},
		{Name: "--node-rank", Kind: Int, Owner: "the runner (one rank per node)", Launch: true},
		{Name: "--master-addr", Kind: String, Owner: "the runner (the first allocated host)", Launch: true},
		{Name: "--headless", Kind: Bool, Owner: "the runner (ranks above 0)", Launch: true},
		{Name: "--distributed-executor-backend", Kind: String, Owner: "the runner (mp across nodes)", Launch: true},
		{Name: "--data-parallel-address", Kind: String, Owner: "the runner (the first allocated host)", Launch: true},
		{Name: "--data-parallel-start-rank", Kind: Int, Owner: "the runner (one rank per node)", Launch: true},
		{Name: "--data-parallel-size-local", Kind: Int, Owner: "the runner (data_parallel_size over nodes)", Launch: true},
	},
	Releases: vllmReleases("serve"),
}

// VLLMBench is `vllm bench serve`: the options wlc sets itself, from a
// typed field (Field) or for the runner (Owner); a config's free-form args
// must not repeat them.
var VLLMBench = &Spec{
	Command: "vllm bench serve",
	Flags: []Flag{
		{Name: "--backend", Kind: String, Field: "the config's backend"},
		{Name: "--base-url", Kind: String, Owner: benchRunner},
		{Name: "--host", Kind: String, Owner: benchRunner},
		{Name: "--port", Kind: Int, Owner: benchRunner},
		{Name: "--model", Kind: String, Field: "the workload's model"},
		{Name: "--dataset-name", Kind: String, Field: "the config's dataset"},
		{Name: "--num-prompts", Kind: Int, Field: "the config's num_prompts"},
		{Name: "--max-concurrency", Kind: Int, Field: "the config's max_concurrency"},
		{Name: "--trust-remote-code", Kind: Bool, Field: "serve.trust_remote_code"},
		{Name: "--random-input-len", Kind: Int, Field: "the config's input_len"},
		{Name: "--random-output-len", Kind: Int, Field: "the config's output_len"},
		{Name: "--ignore-eos", Kind: Bool, Owner: benchRunner},
		{Name: "--dataset-path", Kind: String, Owner: benchRunner},
		{Name: "--speed-bench-output-len", Kind: Int, Field: "the config's output_len"},
		{Name: "--speed-bench-dataset-subset", Kind: String, Field: "the config's speed_bench_dataset_subset"},
		{Name: "--speed-bench-category", Kind: String, Field: "the config's speed_bench_category"},
		{Name: "--skip-tokenizer-init", Kind: Bool, Owner: benchRunner},
		{Name: "--save-result", Kind: Bool, Owner: benchRunner},
		{Name: "--result-dir", Kind: String, Owner: benchRunner},
		{Name: "--result-filename", Kind: String, Owner: benchRunner},
		{Name: "--endpoint", Kind: String, Field: "the config's backend (openai-chat uses /v1/chat/completions)"},
	},
	Releases: vllmReleases("bench"),
}

const benchRunner = "wlc itself (server address, result files, dataset defaults)"

// vllmReleases are one command's option strings in each built-in vLLM
// catalog.
func vllmReleases(cmd string) []Release {
	var rels []Release
	for _, c := range vllmcatalog.Builtin() {
		r := Release{Label: c.Label}
		flags := c.Serve
		if cmd == "bench" {
			flags = c.Bench
		}
		for _, f := range flags {
			r.Actions = append(r.Actions, f.Options)
		}
		rels = append(rels, r)
	}
	return rels
}
