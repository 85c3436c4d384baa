package check

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/wlcdev/wlc/internal/engine/cmdline"
	"github.com/wlcdev/wlc/schema"
)

// disaggFlags are the `vllm serve` options (canonical names, see
// cmdline.VLLMServe) wlc sets on every disaggregated instance itself (see
// #Disagg), beyond the ones it sets on every server.
var disaggFlags = map[string]string{
	"--kv-transfer-config":       "the role's kv_transfer",
	"--data-parallel-size-local": "wlc (gpus_per_node / tensor_parallel_size)",
	"--data-parallel-address":    "wlc (the instance's first node)",
	"--data-parallel-rpc-port":   "wlc (one RPC port per instance)",
	"--data-parallel-start-rank": "wlc (each node's first rank)",
	"--data-parallel-rank":       "wlc (each node's first rank)",
	"--data-parallel-hybrid-lb":  "wlc (every node of a multi-node instance serves HTTP)",
}

// disagg applies the Go rules of a disaggregated workload: argv tokens
// that repeat what wlc sets, and connector settings that must agree
// between the roles (CUE cannot compare two structs).
func (fs *findings) disagg(w *Workload) {
	d := w.Disagg
	if d == nil {
		return
	}
	errf := fs.errorf
	own := min(w.Own, len(w.Serve.ExtraArgs))
	extra := w.Serve.ExtraArgs[own:]
	for _, o := range cmdline.VLLMServe.Owned(extra, disaggFlags) {
		if o.Flag == nil { // FieldRules refuses the declared flags
			errf(fmt.Sprintf("serve.extra_args[%d]", o.Start), "%s is set by %s on every disaggregated instance; remove it from extra_args", extra[o.Start], o.SetBy)
		}
	}
	for _, r := range []struct {
		name string
		role schema.DisaggRole
	}{{"prefill", d.Prefill}, {"decode", d.Decode}} {
		field := "disagg." + r.name + ".serve.extra_args"
		args := r.role.Serve.ExtraArgs
		for _, o := range cmdline.VLLMServe.Owned(args, disaggFlags) {
			at := fmt.Sprintf("%s[%d]", field, o.Start)
			if disaggFlags[o.Option] != "" {
				errf(at, "%s is set by %s on every disaggregated instance; remove it from extra_args", args[o.Start], o.SetBy)
				continue
			}
			owner := o.SetBy
			if strings.HasPrefix(owner, "serve.") {
				owner = "disagg." + r.name + "." + owner
			}
			errf(at, "%s is set by %s; remove it from extra_args (the later flag would silently win)", o.Spelled(args[o.Start], "vLLM"), owner)
		}
	}
	p, q := d.Prefill.KVTransfer, d.Decode.KVTransfer
	if p == nil || q == nil || p.KVConnector != q.KVConnector {
		return // CUE reports a missing or different connector
	}
	if a, b := canonical(p.KVConnectorExtraConfig), canonical(q.KVConnectorExtraConfig); a != b {
		errf("disagg.decode.kv_transfer.kv_connector_extra_config", "decode's kv_connector_extra_config %s differs from prefill's %s; both ends of a %s transfer need the same connector settings: use one value on both roles", b, a, p.KVConnector)
	}
	if p.KVBufferDevice != q.KVBufferDevice {
		errf("disagg.decode.kv_transfer.kv_buffer_device", "decode stages KV caches on %q but prefill on %q; both ends of a %s transfer need the same kv_buffer_device", q.KVBufferDevice, p.KVBufferDevice, p.KVConnector)
	}
}

// canonical is v as compact JSON with sorted keys ("{}" when empty).
func canonical(v map[string]any) string {
	if len(v) == 0 {
		return "{}"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
