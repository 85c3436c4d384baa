package recipes

import (
	"reflect"
	"strings"
	"testing"
)

// The two worked cases of reference/recipes.md §3.5 and §3.6, token for
// token as the site renders them (annotations removed).
func TestComposeDocumentedCases(t *testing.T) {
	s := loadCorpus(t)
	for _, tc := range []struct {
		name string
		req  Request
		env  []string
		argv [][]string
	}{{
		name: "A Qwen3.5 nvfp4 8xB200 single_node_tep",
		req:  Request{Recipe: "Qwen/Qwen3.5-397B-A17B", Hardware: "b200", Variant: "nvfp4", Strategy: "single_node_tep"},
		env:  []string{"VLLM_DEEP_GEMM_WARMUP=skip", "VLLM_USE_DEEP_GEMM=0", "VLLM_FLASHINFER_MOE_BACKEND=latency", "VLLM_USE_FLASHINFER_MOE_FP4=1"},
		argv: [][]string{{"nvidia/Qwen3.5-397B-A17B-NVFP4",
			"--trust-remote-code",
			"--kv-cache-dtype", "fp8",
			"--enable-expert-parallel",
			"--tensor-parallel-size", "8",
			"--enable-auto-tool-choice", "--tool-call-parser", "qwen3_coder",
			"--reasoning-parser", "qwen3",
			"--mm-encoder-tp-mode", "data"}},
	}, {
		name: "B DeepSeek-V4-Pro 2xB200 multi_node_dep",
		req:  Request{Recipe: "deepseek-ai/DeepSeek-V4-Pro", Hardware: "b200", Strategy: "multi_node_dep", Nodes: 2},
		env:  []string{"GLOO_SOCKET_IFNAME=$IFACE_NAME", "NCCL_SOCKET_IFNAME=$IFACE_NAME"},
		argv: func() [][]string {
			head := []string{"deepseek-ai/DeepSeek-V4-Pro-0813",
				"--trust-remote-code", "--kv-cache-dtype", "fp8", "--block-size", "256",
				"--enable-expert-parallel", "--data-parallel-hybrid-lb",
				"--data-parallel-size", "16", "--data-parallel-size-local", "8",
				"--data-parallel-address", "$HEAD_IP"}
			tail := []string{
				"--compilation-config", `{"cudagraph_mode":"FULL_AND_PIECEWISE", "custom_ops":["all"]}`,
				"--attention_config.use_fp4_indexer_cache=True",
				"--moe-backend", "deep_gemm_mega_moe",
				"--tokenizer-mode", "deepseek_v4", "--tool-call-parser", "deepseek_v4", "--enable-auto-tool-choice",
				"--reasoning-parser", "deepseek_v4",
				"--speculative-config", `{"method":"dspark","num_speculative_tokens":7,"draft_sample_method":"probabilistic"}`}
			worker := append(append(append([]string(nil), head...), "--data-parallel-start-rank", "8"), tail...)
			return [][]string{append(append([]string(nil), head...), tail...), worker}
		}(),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c := Compose(s, tc.req)
			if c.Findings.Diags().HasErrors() {
				t.Fatalf("errors: %v", c.Findings.Diags())
			}
			var env []string
			for _, e := range c.Env {
				env = append(env, e.Name+"="+e.Value)
			}
			if !reflect.DeepEqual(env, tc.env) {
				t.Errorf("env:\n got %q\nwant %q", env, tc.env)
			}
			if len(c.Args) != len(tc.argv) {
				t.Fatalf("%d ranks, want %d", len(c.Args), len(tc.argv))
			}
			for rank := range tc.argv {
				if got := c.Argv(rank, false); !reflect.DeepEqual(got, tc.argv[rank]) {
					t.Errorf("rank %d argv:\n got %s\nwant %s", rank, strings.Join(got, " "), strings.Join(tc.argv[rank], " "))
				}
			}
			if len(c.Findings) != 0 {
				t.Errorf("unexpected findings: %v", c.Findings.Diags())
			}
		})
	}
}
