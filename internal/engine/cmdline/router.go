package cmdline

import "github.com/wlcdev/wlc/internal/engine/vllmrouter"

// VLLMRouter is vllm-router in vLLM PD mode, the router of a
// disaggregated job: the options typed #Router fields hold and the ones
// wlc or its runner set. Its option strings are vllmrouter's model of the
// router's clap parser, which reads them exactly (Exact).
var VLLMRouter = &Spec{
	Command: "vllm-router",
	Exact:   true,
	Flags: []Flag{
		{Name: "--policy", Kind: String, Field: "disagg.router.policy"},
		{Name: "--intra-node-data-parallel-size", Kind: Int, Field: "disagg.router.intra_node_data_parallel_size"},
		{Name: "--prometheus-port", Kind: Int, Field: "disagg.router.metrics_port"},
		{Name: "--port", Kind: Int, Field: "port"},
		{Name: "--host", Kind: String, Owner: "wlc (0.0.0.0: the job's clients reach the router from any node)"},
		{Name: "--vllm-pd-disaggregation", Kind: Bool, Owner: "wlc (the router runs in vLLM PD mode)"},
		{Name: "--prefill", Kind: String, Owner: routerWorkers},
		{Name: "--decode", Kind: String, Owner: routerWorkers},
		{Name: "--worker-urls", Kind: String, Owner: routerWorkers},
		{Name: "--vllm-discovery-address", Kind: String, Owner: routerWorkers},
		{Name: "--service-discovery", Kind: Bool, Owner: routerWorkers},
		{Name: "--selector", Kind: String, Owner: routerWorkers},
		{Name: "--prefill-selector", Kind: String, Owner: routerWorkers},
		{Name: "--decode-selector", Kind: String, Owner: routerWorkers},
	},
	Releases: []Release{routerRelease()},
}

const routerWorkers = "the runner (the router's workers are the job's instances: one --prefill URL per prefill instance, one --decode URL per decode node)"

func routerRelease() Release {
	r := Release{Label: "vllm-router"}
	for _, n := range vllmrouter.Names() {
		r.Actions = append(r.Actions, []string{n})
	}
	return r
}
