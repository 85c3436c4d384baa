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
	owned := func(field string, args []string, skip int) {
		for i, tok := range args {
			if i < skip {
				continue
			}
			m, ok := cmdline.VLLMServe.Resolve(tok)
			if !ok || field == "serve.extra_args" && m.Flag != nil {
				continue // the workload's extra_args: FieldRules refuses wlc's flags
			}
			if owner, taken := disaggFlags[m.Option]; taken {
				errf(fmt.Sprintf("%s[%d]", field, i-skip), "%s is set by %s on every disaggregated instance; remove it from extra_args", tok, owner)
			}
		}
	}
	owned("serve.extra_args", w.Serve.ExtraArgs, w.Own)
	for _, r := range []struct {
		name string
		role schema.DisaggRole
	}{{"prefill", d.Prefill}, {"decode", d.Decode}} {
		field := "disagg." + r.name + ".serve.extra_args"
		owned(field, r.role.Serve.ExtraArgs, 0)
		for i, tok := range r.role.Serve.ExtraArgs {
			m, ok := cmdline.VLLMServe.Resolve(tok)
			if !ok || m.Flag == nil || disaggFlags[m.Option] != "" {
				continue
			}
			owner := m.Flag.SetBy()
			if strings.HasPrefix(owner, "serve.") {
				owner = "disagg." + r.name + "." + owner
			}
			errf(fmt.Sprintf("%s[%d]", field, i), "%s is set by %s; remove it from extra_args (the later flag would silently win)", tok, owner)
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
