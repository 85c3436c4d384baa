package recipes

import (
	"strings"
	"testing"
)

// TestComposePD renders Kimi-K2.5's pd_cluster on GB300 and on B200: one
// DEP pool per role (strategy_overrides.pd_cluster), the role's own
// arguments (port, NIXL kv-transfer config, the decode graphs) after the
// recipe's shared ones, the pool's computed parallel sizes, and the
// NVL4-only variables kept on GB300 but not on B200.
func TestComposePD(t *testing.T) {
	s := loadCorpus(t)
	for _, hw := range []string{"gb300", "b200"} {
		t.Run(hw, func(t *testing.T) {
			cmd := Compose(s, Request{Recipe: "moonshotai/Kimi-K2.5", Hardware: hw, Variant: "nvfp4", Strategy: "pd_cluster"})
			if cmd.Findings.Diags().HasErrors() {
				t.Fatalf("findings: %v", cmd.Findings.Diags())
			}
			if cmd.PD == nil || len(cmd.PD.Pools) != 2 {
				t.Fatalf("want two pools, got %+v", cmd.PD)
			}
			g := map[string]string{"gb300": "4", "b200": "8"}[hw]
			if cmd.Nodes != 2 || cmd.PD.RouterPolicy != "round_robin" {
				t.Errorf("nodes %d, router %q; want 2 and round_robin", cmd.Nodes, cmd.PD.RouterPolicy)
			}
			for _, pool := range cmd.PD.Pools {
				var argv []string
				for _, a := range pool.Args {
					argv = append(argv, a.Tokens()...)
				}
				line := " " + strings.Join(argv, " ") + " "
				port := map[string]string{"prefill": "8001", "decode": "8002"}[pool.Role]
				kvRole := map[string]string{"prefill": "kv_producer", "decode": "kv_consumer"}[pool.Role]
				for _, want := range []string{
					" --port " + port + " ",
					`"kv_role":"` + kvRole + `"`,
					" --data-parallel-size " + g + " --enable-expert-parallel ",
					" --kv-cache-dtype fp8 ",
				} {
					if !strings.Contains(line, want) {
						t.Errorf("%s pool lacks %q:%s", pool.Role, want, line)
					}
				}
				if pool.Nodes != 1 || pool.Mode != "dep" {
					t.Errorf("%s pool: %d node(s) %s, want 1 dep", pool.Role, pool.Nodes, pool.Mode)
				}
				decodeOnly := strings.Contains(line, "FULL_DECODE_ONLY")
				if decodeOnly != (pool.Role == "decode") {
					t.Errorf("%s pool: FULL_DECODE_ONLY graphs %v", pool.Role, decodeOnly)
				}
				env := map[string]string{}
				for _, e := range pool.Env {
					env[e.Name] = e.Value
				}
				if _, set := env["VLLM_NIXL_SIDE_CHANNEL_HOST"]; set {
					t.Errorf("%s pool: the site's $..._NODE_1 side-channel host leaked into the env", pool.Role)
				}
				if _, set := env["NCCL_MNNVL_ENABLE"]; set != (hw == "gb300") {
					t.Errorf("%s pool on %s: NCCL_MNNVL_ENABLE set %v", pool.Role, hw, set)
				}
			}
		})
	}
}
