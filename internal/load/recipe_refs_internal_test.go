package load

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wlcdev/wlc/internal/recipes"
)

// units groups argv tokens into flag units the way recipes.Compose does.
func units(toks ...string) []recipes.Arg {
	var pos []recipes.Pos
	for i := range toks {
		pos = append(pos, recipes.Pos{File: "r.yaml", Line: i + 1, Column: 1})
	}
	return recipes.Group(toks, pos, "test")
}

// TestDeriveArgs: each typed serve option from its argv spellings, the
// untyped rest in order, and the launch flags dropped.
func TestDeriveArgs(t *testing.T) {
	for _, c := range []struct {
		name  string
		argv  []string
		nodes int
		want  map[string]any // serve.<field> → value
		rest  []string
		errs  []string
	}{
		{name: "tensor parallel", argv: []string{"--tensor-parallel-size", "8"}, want: map[string]any{"tensor_parallel_size": 8}},
		{name: "tp alias", argv: []string{"-tp", "4"}, want: map[string]any{"tensor_parallel_size": 4}},
		{name: "data parallel", argv: []string{"--data-parallel-size=8"}, want: map[string]any{"data_parallel_size": 8}},
		{name: "dp alias", argv: []string{"-dp", "2"}, want: map[string]any{"data_parallel_size": 2}},
		{name: "pipeline parallel", argv: []string{"--pipeline_parallel_size", "2"}, want: map[string]any{"pipeline_parallel_size": 2}},
		{name: "expert parallel", argv: []string{"--enable-expert-parallel"}, want: map[string]any{"enable_expert_parallel": true}},
		{name: "expert parallel off", argv: []string{"--no-enable-expert-parallel"}, want: map[string]any{"enable_expert_parallel": false}},
		{name: "kv cache dtype", argv: []string{"--kv-cache-dtype", "fp8"}, want: map[string]any{"kv_cache_dtype": "fp8"}},
		{name: "max model len", argv: []string{"--max-model-len", "32768"}, want: map[string]any{"max_model_len": 32768}},
		{name: "max model len auto", argv: []string{"--max_model_len=auto"}, want: map[string]any{"max_model_len": "auto"}},
		{name: "max model len 32k", argv: []string{"--max-model-len", "32k"}, want: map[string]any{"max_model_len": 32000}},
		{name: "max model len 32K", argv: []string{"--max-model-len", "32K"}, want: map[string]any{"max_model_len": 32768}},
		{name: "max num seqs", argv: []string{"--max_num_seqs", "512"}, want: map[string]any{"max_num_seqs": 512}},
		{name: "max num batched tokens", argv: []string{"--max-num-batched-tokens", "8192"}, want: map[string]any{"max_num_batched_tokens": 8192}},
		{name: "gpu memory utilization", argv: []string{"--gpu-memory-utilization", "0.95"}, want: map[string]any{"gpu_memory_utilization": 0.95}},
		{name: "block size", argv: []string{"--block-size=64"}, want: map[string]any{"block_size": 64}},
		{name: "prefix caching", argv: []string{"--enable-prefix-caching"}, want: map[string]any{"enable_prefix_caching": true}},
		{name: "prefix caching off", argv: []string{"--no-enable-prefix-caching"}, want: map[string]any{"enable_prefix_caching": false}},
		{name: "trust remote code", argv: []string{"--trust-remote-code"}, want: map[string]any{"trust_remote_code": true}},
		{name: "tokenizer mode", argv: []string{"--tokenizer-mode", "deepseek_v4"}, want: map[string]any{"tokenizer_mode": "deepseek_v4"}},
		{name: "tool call parser", argv: []string{"--tool-call-parser", "qwen3_coder"}, want: map[string]any{"tool_call_parser": "qwen3_coder"}},
		{name: "reasoning parser", argv: []string{"--reasoning-parser", "qwen3"}, want: map[string]any{"reasoning_parser": "qwen3"}},
		{name: "auto tool choice", argv: []string{"--enable-auto-tool-choice"}, want: map[string]any{"enable_auto_tool_choice": true}},
		{name: "language model only", argv: []string{"--language-model-only"}, want: map[string]any{"language_model_only": true}},
		{name: "moe backend", argv: []string{"--moe-backend", "deep_gemm_mega_moe"}, want: map[string]any{"moe_backend": "deep_gemm_mega_moe"}},
		{
			name: "speculative config JSON", argv: []string{"--speculative-config", `{"method":"mtp","num_speculative_tokens":3}`},
			want: map[string]any{"speculative_config": map[string]any{"method": "mtp", "num_speculative_tokens": 3}},
		},
		{
			name: "speculative config dotted", argv: []string{"--speculative-config.method", "mtp", "--speculative-config.num_speculative_tokens", "3"},
			want: map[string]any{"speculative_config": map[string]any{"method": "mtp", "num_speculative_tokens": 3}},
		},
		{
			name: "compilation config JSON", argv: []string{"--compilation-config", `{"cudagraph_mode":"FULL_AND_PIECEWISE", "custom_ops":["all"]}`},
			want: map[string]any{"compilation_config": map[string]any{"cudagraph_mode": "FULL_AND_PIECEWISE", "custom_ops": []any{"all"}}},
		},
		{
			name: "compilation config alias, nested dotted keys", argv: []string{"-cc.pass_config.fuse_rope_kvcache=True", "-cc.use_inductor_graph_partition=True", "-cc.mode", "3"},
			want: map[string]any{"compilation_config": map[string]any{"pass_config": map[string]any{"fuse_rope_kvcache": true}, "use_inductor_graph_partition": true, "mode": 3}},
		},
		{
			name: "attention config dotted, Python boolean", argv: []string{"--attention_config.use_fp4_indexer_cache=True", "--attention_config.backend", "FLASHINFER"},
			want: map[string]any{"attention_config": map[string]any{"use_fp4_indexer_cache": true, "backend": "FLASHINFER"}},
		},
		{
			name: "kernel config JSON", argv: []string{"--kernel-config", `{"enable_jit_warmup":false}`},
			want: map[string]any{"kernel_config": map[string]any{"enable_jit_warmup": false}},
		},
		{
			name: "untyped flags keep their order and spelling",
			argv: []string{"--mm-encoder-tp-mode", "data", "--chat-template-content-format=string", "--no-enable-flashinfer-autotune", "--tensor-parallel-size", "8"},
			want: map[string]any{"tensor_parallel_size": 8},
			rest: []string{"--mm-encoder-tp-mode", "data", "--chat-template-content-format=string", "--no-enable-flashinfer-autotune"},
		},
		{
			name: "multi-node TP launch flags dropped", nodes: 2,
			argv: []string{"--tensor-parallel-size", "16", "--nnodes", "2", "--node-rank", "1", "--master-addr", "$HEAD_IP", "--headless"},
			want: map[string]any{"tensor_parallel_size": 16},
		},
		{
			name: "multi-node DEP launch flags dropped", nodes: 2,
			argv: []string{"--enable-expert-parallel", "--data-parallel-hybrid-lb", "--data-parallel-size", "8", "--data-parallel-size-local", "4", "--data-parallel-address", "$HEAD_IP", "--data-parallel-start-rank", "4"},
			want: map[string]any{"enable_expert_parallel": true, "data_parallel_size": 8},
			rest: []string{"--data-parallel-hybrid-lb"},
		},
		{
			name: "mp backend dropped", argv: []string{"--distributed-executor-backend", "mp"},
			want: map[string]any{},
		},
		{
			name: "node count differs", nodes: 2, argv: []string{"--tensor-parallel-size", "24", "--nnodes", "3"},
			want: map[string]any{"tensor_parallel_size": 24},
			errs: []string{"gives --nnodes 3 from test at r.yaml:3:1, but the workload runs on 2 node(s)"},
		},
		{
			name: "local DP size differs", nodes: 2, argv: []string{"--data-parallel-size", "8", "--data-parallel-size-local", "2"},
			want: map[string]any{"data_parallel_size": 8},
			errs: []string{"gives --data-parallel-size-local 2 from test at r.yaml:3:1, but data_parallel_size 8 over 2 node(s) is 4 per node"},
		},
		{
			name: "errors", argv: []string{"--max-num-seqs", "many", "--distributed-executor-backend", "ray", "--port", "8000", "--chat-template", "$HEAD_IP/t.jinja", "--trust-remote-code", "yes please", "--tensor-parallel", "2", "-cc.mode", "3"},
			// a switch takes no value; prefixes and aliases are the typed options
			want: map[string]any{"trust_remote_code": true, "tensor_parallel_size": 2, "compilation_config": map[string]any{"mode": 3}},
			errs: []string{
				`gives --max-num-seqs many from test at r.yaml:1:1, but "many" is not an integer`,
				"gives --distributed-executor-backend ray from test at r.yaml:3:1, but wlc's runner starts vLLM with multiprocessing (mp) only",
				"gives --port 8000 from test at r.yaml:5:1, but --port is set by wlc (the workload's model, the runner's host and port)",
				"gives --chat-template $HEAD_IP/t.jinja from test at r.yaml:7:1, but $HEAD_IP is set only by the recipes site's launch script",
				`gives yes please from test at r.yaml:10:1, but vLLM reads it as a positional argument after the model (--trust-remote-code before it is a switch and takes no value) and refuses it`,
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			nodes := c.nodes
			if nodes == 0 {
				nodes = 1
			}
			values := map[string]derivedValue{}
			rest, errs := deriveArgs(units(c.argv...), nodes, values)
			got := map[string]any{}
			for k, v := range values {
				got[strings.TrimPrefix(k, "serve.")] = v.value
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("typed (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.rest, argTokens(rest)); diff != "" {
				t.Errorf("untyped (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.errs, errs); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestImpliedParallelism: the sizes a strategy leaves out are 1.
func TestImpliedParallelism(t *testing.T) {
	v := map[string]derivedValue{"serve.data_parallel_size": {value: 8, text: "--data-parallel-size 8"}}
	impliedParallelism(v)
	got := map[string]any{}
	for k, x := range v {
		got[k] = []any{x.value, x.text}
	}
	want := map[string]any{
		"serve.data_parallel_size":     []any{8, "--data-parallel-size 8"},
		"serve.tensor_parallel_size":   []any{1, "--data-parallel-size 8 with tensor_parallel_size 1"},
		"serve.pipeline_parallel_size": []any{1, "--data-parallel-size 8 with pipeline_parallel_size 1"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
