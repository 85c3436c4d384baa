package plan

import (
	"github.com/wlcdev/wlc/internal/engine/cmdline"
	"sort"
	"strconv"

	"github.com/wlcdev/wlc/schema"
)

// Disagg is prefill/decode-disaggregated serving: vLLM instances on whole
// nodes of the job, moving KV caches through a connector, behind a router
// on the job's first node. A workload with Disagg is marked disaggregated
// in its results; Workload.GPUs counts the GPUs of every instance.
type Disagg struct {
	// Instances are in node order: every prefill instance, then every
	// decode instance; together they use every node of the job.
	Instances []Instance `json:"instances"`
	Router    Router     `json:"router"`
}

// Instance is one vLLM server of a role.
type Instance struct {
	// Role is prefill or decode; Index counts the role's instances.
	Role  string `json:"role"`
	Index int    `json:"index"`
	// FirstNode is the index, among the job's nodes, of the first of the
	// Nodes consecutive nodes the instance spans.
	FirstNode   int `json:"first_node"`
	Nodes       int `json:"nodes"`
	GPUsPerNode int `json:"gpus_per_node"`
	// Port is the instance's HTTP port on each of its nodes.
	Port                  int `json:"port"`
	TensorParallelSize    int `json:"tensor_parallel_size"`
	DataParallelSize      int `json:"data_parallel_size"`
	DataParallelSizeLocal int `json:"data_parallel_size_local"`
	// RPCPort is the data-parallel RPC port of a data-parallel instance
	// (0 otherwise).
	RPCPort int `json:"data_parallel_rpc_port,omitempty"`
	// Args follow `vllm serve`: the model, the workload's shared options,
	// the role's, then --kv-transfer-config. The runner adds --host, --port
	// and, when DataParallelSize > 1, each node's --data-parallel-size-local,
	// --data-parallel-start-rank, --data-parallel-address (the instance's
	// first node), --data-parallel-rpc-port and --data-parallel-hybrid-lb.
	Args []string `json:"args"`
	// Env is the instance's environment: the workload's, the role's over
	// it, sorted by name.
	Env []EnvVar `json:"env"`
	// KVConnector is the connector class; NixlConnector instances learn
	// their node's address for the side channel
	// (VLLM_NIXL_SIDE_CHANNEL_HOST).
	KVConnector string `json:"kv_connector,omitempty"`
}

// Router is the PD router.
type Router struct {
	// Argv is the command and wlc's options; the runner adds --port (the
	// job's server port), one --prefill URL per prefill instance and one
	// --decode URL per decode node.
	Argv []string `json:"argv"`
	// Dir is where the router starts: "", an absolute path, or ~/...
	Dir             string   `json:"dir,omitempty"`
	NofileLimit     int      `json:"nofile_limit,omitempty"`
	StartupTimeoutS int      `json:"startup_timeout_s"`
	Env             []EnvVar `json:"env,omitempty"`
}

// RouterReadiness is the path the router answers once it can route
// (vllm-router's readiness probe, which perf-eval's launcher polled).
const RouterReadiness = "/readiness"

// dpRPCPortBase is the first instance's data-parallel RPC port; instance
// i uses base + i (perf-eval's launcher did the same).
const dpRPCPortBase = 29500

// disagg resolves w.Disagg over the workload's shared serve options and
// environment (env, already merged with the profile's).
func disagg(w schema.Workload, env []EnvVar) *Disagg {
	d := w.Disagg
	out := &Disagg{}
	shared := serveArgs(w).Args[1:]
	node := 0
	for _, r := range []struct {
		name string
		role schema.DisaggRole
	}{{"prefill", d.Prefill}, {"decode", d.Decode}} {
		rs := serveArgs(schema.Workload{Model: w.Model, Serve: r.role.Serve}).Args[1:]
		args := append(append([]string{w.Model}, shared...), rs...)
		var connector string
		if kv := r.role.KVTransfer; kv != nil {
			connector = kv.KVConnector
			args = append(args, "--kv-transfer-config", KVTransferConfig(kv))
		}
		tp, dp := r.role.Serve.TensorParallelSize, r.role.Serve.DataParallelSize
		for i := 0; i < r.role.Count; i++ {
			in := Instance{
				Role: r.name, Index: i,
				FirstNode: node, Nodes: r.role.Nodes, GPUsPerNode: w.GPUsPerNode,
				Port:               r.role.Port,
				TensorParallelSize: tp, DataParallelSize: dp,
				Args:        args,
				Env:         overEnv(env, r.role.Env),
				KVConnector: connector,
			}
			if dp > 1 {
				in.DataParallelSizeLocal = w.GPUsPerNode / tp
				in.RPCPort = dpRPCPortBase + len(out.Instances)
			}
			out.Instances = append(out.Instances, in)
			node += r.role.Nodes
		}
	}
	rt := d.Router
	out.Router = Router{Argv: RouterArgv(rt), Dir: rt.Dir, NofileLimit: rt.NofileLimit, StartupTimeoutS: rt.StartupTimeoutS, Env: overEnv(nil, rt.Env)}
	return out
}

// RouterArgv is the router's command with wlc's options and the
// workload's extra_args (the runner adds --port and the worker URLs).
func RouterArgv(rt schema.Router) []string {
	argv := append([]string(nil), rt.Command...)
	argv = append(argv, "--policy", rt.Policy, "--host", "0.0.0.0",
		"--intra-node-data-parallel-size", strconv.Itoa(rt.IntraNodeDataParallelSize),
		"--vllm-pd-disaggregation")
	if rt.MetricsPort != 0 {
		argv = append(argv, "--prometheus-port", strconv.Itoa(rt.MetricsPort))
	}
	return append(argv, rt.ExtraArgs...)
}

// overEnv is base with over's variables set, sorted by name.
func overEnv(base []EnvVar, over map[string]string) []EnvVar {
	m := map[string]string{}
	for _, e := range base {
		m[e.Name] = e.Value
	}
	for k, v := range over {
		m[k] = v
	}
	out := make([]EnvVar, 0, len(m))
	for k, v := range m {
		out = append(out, EnvVar{Name: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// KVTransferConfig renders kv as vLLM's --kv-transfer-config: compact
// JSON, keys sorted, unset options left out.
func KVTransferConfig(kv *schema.KVTransfer) string {
	cfg := map[string]any{"kv_connector": kv.KVConnector, "kv_role": kv.KVRole}
	if kv.KVLoadFailurePolicy != "" {
		cfg["kv_load_failure_policy"] = kv.KVLoadFailurePolicy
	}
	if kv.KVBufferDevice != "" {
		cfg["kv_buffer_device"] = kv.KVBufferDevice
	}
	if kv.KVConnectorExtraConfig != nil {
		cfg["kv_connector_extra_config"] = kv.KVConnectorExtraConfig
	}
	return cmdline.Token(cfg)
}
