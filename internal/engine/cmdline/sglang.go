package cmdline

import "github.com/wlcdev/wlc/internal/engine/sglang"

// SGLangServe is `python3 -m sglang.launch_server`: the options typed
// #SGLangServe fields hold, in the order the plan renders them, and the
// ones wlc or its runner set. Equivalent names the vLLM serve field that
// means the same thing, so an option given to the wrong engine names the
// right one. Its option strings are every launch_server option
// internal/engine/sglang models (with argparse's abbreviations: --tp is
// --tp-size).
var SGLangServe = &Spec{
	Command: "python3 -m sglang.launch_server",
	Flags: []Flag{
		{Name: "--tp-size", Kind: Int, Field: "sglang.tp_size", Default: 1, Equivalent: "serve.tensor_parallel_size"},
		{Name: "--pp-size", Kind: Int, Field: "sglang.pp_size", Default: 1, Equivalent: "serve.pipeline_parallel_size"},
		{Name: "--dp-size", Kind: Int, Field: "sglang.dp_size", Default: 1, Equivalent: "serve.data_parallel_size"},
		{Name: "--ep-size", Kind: Int, Field: "sglang.ep_size", Default: 1, Equivalent: "serve.enable_expert_parallel"},
		{Name: "--enable-dp-attention", Kind: Bool, Field: "sglang.enable_dp_attention", Default: false},
		{Name: "--context-length", Kind: Int, Field: "sglang.context_length", Equivalent: "serve.max_model_len"},
		{Name: "--max-running-requests", Kind: Int, Field: "sglang.max_running_requests", Equivalent: "serve.max_num_seqs"},
		{Name: "--chunked-prefill-size", Kind: Int, Field: "sglang.chunked_prefill_size", Equivalent: "serve.max_num_batched_tokens"},
		{Name: "--max-prefill-tokens", Kind: Int, Field: "sglang.max_prefill_tokens"},
		{Name: "--mem-fraction-static", Kind: Float, Field: "sglang.mem_fraction_static", Equivalent: "serve.gpu_memory_utilization"},
		{Name: "--kv-cache-dtype", Kind: String, Field: "sglang.kv_cache_dtype", Equivalent: "serve.kv_cache_dtype"},
		{Name: "--disable-radix-cache", Kind: Bool, Field: "sglang.disable_radix_cache", Default: false, Equivalent: "serve.enable_prefix_caching"},
		{Name: "--trust-remote-code", Kind: Bool, Field: "sglang.trust_remote_code", Default: false, Equivalent: "serve.trust_remote_code"},
		{Name: "--attention-backend", Kind: String, Field: "sglang.attention_backend"},
		{Name: "--moe-a2a-backend", Kind: String, Field: "sglang.moe_a2a_backend"},
		{Name: "--moe-runner-backend", Kind: String, Field: "sglang.moe_runner_backend", Equivalent: "serve.moe_backend"},
		{Name: "--speculative-algorithm", Kind: String, Field: "sglang.speculative_algorithm", Equivalent: "serve.speculative_config"},
		{Name: "--speculative-draft-model-path", Kind: String, Field: "sglang.speculative_draft_model_path", Equivalent: "serve.speculative_config"},
		{Name: "--speculative-num-steps", Kind: Int, Field: "sglang.speculative_num_steps", Equivalent: "serve.speculative_config"},
		{Name: "--speculative-eagle-topk", Kind: Int, Field: "sglang.speculative_eagle_topk", Equivalent: "serve.speculative_config"},
		{Name: "--speculative-num-draft-tokens", Kind: Int, Field: "sglang.speculative_num_draft_tokens", Equivalent: "serve.speculative_config"},
		{Name: "--tool-call-parser", Kind: String, Field: "sglang.tool_call_parser", Equivalent: "serve.tool_call_parser"},
		{Name: "--reasoning-parser", Kind: String, Field: "sglang.reasoning_parser", Equivalent: "serve.reasoning_parser"},

		{Name: "--model-path", Kind: String, Owner: "model"},
		{Name: "--host", Kind: String, Owner: "the runner"},
		{Name: "--port", Kind: Int, Owner: "the runner (each job picks a free port)"},
		// Multi-node launch: the runner starts every rank itself.
		{Name: "--nnodes", Kind: Int, Owner: "the runner (from nodes)", Launch: true},
		{Name: "--node-rank", Kind: Int, Owner: "the runner (one rank per node)", Launch: true},
		{Name: "--dist-init-addr", Kind: String, Owner: "the runner (the first allocated host)", Launch: true},
	},
	Releases: []Release{sglangRelease(sglang.LaunchServer)},
}

// SGLangBench is `python3 -m sglang.bench_serving`: the options wlc sets
// itself (perf-eval's SGLANG_BENCH_RESERVED_ARGS, and --base-url, which wlc
// uses instead of --host/--port); a config's free-form args must not
// repeat them.
var SGLangBench = &Spec{
	Command: "python3 -m sglang.bench_serving",
	Flags: []Flag{
		{Name: "--backend", Kind: String, Field: "the config's backend"},
		{Name: "--base-url", Kind: String, Owner: benchRunner},
		{Name: "--host", Kind: String, Owner: benchRunner},
		{Name: "--port", Kind: Int, Owner: benchRunner},
		{Name: "--model", Kind: String, Field: "the workload's model"},
		{Name: "--dataset-name", Kind: String, Field: "the config's dataset"},
		{Name: "--num-prompts", Kind: Int, Field: "the config's num_prompts"},
		{Name: "--max-concurrency", Kind: Int, Field: "the config's max_concurrency"},
		{Name: "--random-input-len", Kind: Int, Field: "the config's input_len"},
		{Name: "--random-output-len", Kind: Int, Field: "the config's output_len"},
		{Name: "--random-range-ratio", Kind: Float, Owner: "wlc (1.0: every request has exactly input_len and output_len tokens)"},
		{Name: "--warmup-requests", Kind: Int, Owner: "wlc (64, as perf-eval)"},
		{Name: "--flush-cache", Kind: Bool, Owner: "wlc (the cache is flushed before every run)"},
		{Name: "--output-file", Kind: String, Owner: benchRunner},
	},
	Releases: []Release{sglangRelease(sglang.BenchServing)},
}

// sglangRelease lists a parser model's option strings, one action each.
func sglangRelease(t *sglang.Table) Release {
	r := Release{Label: "sglang (" + t.Prog + ")"}
	for _, o := range t.Options() {
		r.Actions = append(r.Actions, o.Names)
	}
	return r
}
