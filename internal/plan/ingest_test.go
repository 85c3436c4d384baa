package plan

import (
	"testing"

	"github.com/wlcdev/wlc/schema"
)

// TestPerfRowServingShape: a row's per-GPU divisor is the GPUs the serving
// instances use (TP × DP × PP per instance, every role, every node), never
// reserved GPUs left idle, and an SGLang row carries the expert
// parallelism, DP attention and speculative decoding the workload types.
func TestPerfRowServingShape(t *testing.T) {
	cat := Catalog{
		Profiles: map[string]schema.Profile{"H200": {Name: "H200", Hardware: "H200"}},
		Hardware: map[string]schema.Hardware{"H200": {Name: "H200", Vendor: "nvidia"}},
	}
	serve := func(tp, dp, pp int) schema.Serve {
		return schema.Serve{TensorParallelSize: tp, DataParallelSize: dp, PipelineParallelSize: pp}
	}
	role := func(count, nodes, tp, dp int) schema.DisaggRole {
		return schema.DisaggRole{Count: count, Nodes: nodes, Port: 8100, Serve: serve(tp, dp, 1)}
	}
	type row struct {
		GPUs, EP             int
		DPAttention, SpecDec string
	}
	for _, c := range []struct {
		name string
		w    schema.Workload
		want row
	}{
		{"tp4 on 8 reserved, 4 idle", schema.Workload{Nodes: 1, GPUsPerNode: 8, Serve: serve(4, 1, 1), IdleGPUs: &schema.IdleGPUs{Count: 4, Reason: "memory bandwidth"}},
			row{4, 1, "false", "false"}},
		{"tp2 pp2 dp2 on 2 nodes, 8 idle", schema.Workload{Nodes: 2, GPUsPerNode: 8, Serve: serve(2, 2, 2), IdleGPUs: &schema.IdleGPUs{Count: 8, Reason: "x"}},
			row{8, 1, "false", "false"}},
		{"tp8 every GPU", schema.Workload{Nodes: 1, GPUsPerNode: 8, Serve: serve(8, 1, 1)}, row{8, 1, "false", "false"}},
		{"vllm speculative", schema.Workload{Nodes: 1, GPUsPerNode: 8, Serve: func() schema.Serve {
			s := serve(8, 1, 1)
			s.SpeculativeConfig = map[string]any{"method": "eagle", "num_speculative_tokens": 3}
			return s
		}()}, row{8, 1, "false", "true"}},
		{"pd: 2 prefill dp4 + 1 decode tp4 dp2 over 2 nodes", schema.Workload{Nodes: 4, GPUsPerNode: 4, Serve: serve(1, 1, 1),
			Disagg: &schema.Disagg{Prefill: role(2, 1, 1, 4), Decode: role(1, 2, 4, 2), Router: schema.Router{Command: []string{"vllm-router"}, Policy: "round_robin", IntraNodeDataParallelSize: 1}}},
			row{16, 1, "false", "false"}},
		{"sglang ep8 eagle dp-attention", schema.Workload{Engine: schema.EngineSGLang, Nodes: 1, GPUsPerNode: 8,
			SGLang: &schema.SGLangServe{TPSize: 8, PPSize: 1, DPSize: 8, EPSize: 8, EnableDPAttention: true, SpeculativeAlgorithm: "EAGLE"}},
			row{8, 8, "true", "true"}},
		{"sglang tp4 dp2 replicas", schema.Workload{Engine: schema.EngineSGLang, Nodes: 1, GPUsPerNode: 8,
			SGLang: &schema.SGLangServe{TPSize: 4, PPSize: 1, DPSize: 2, EPSize: 1}},
			row{8, 1, "false", "false"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := c.w
			w.Name, w.Profile, w.Model, w.Precision = "w", "H200", "org/m", "bf16"
			if w.Engine == "" {
				w.Engine = schema.EngineVLLM
			}
			p, err := Resolve(w, "workloads/w.cue", cat, Overrides{})
			if err != nil {
				t.Fatal(err)
			}
			r := p.Ingest.Perf
			if got := (row{r.GPUCount, r.EP, r.DPAttention, r.SpecDecoding}); got != c.want {
				t.Errorf("row gpu_count, ep, dp_attention, spec_decoding = %+v, want %+v (reserved %d)", got, c.want, p.GPUs)
			}
		})
	}
}
