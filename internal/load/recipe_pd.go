package load

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/wlcdev/wlc/internal/check"
	"github.com/wlcdev/wlc/internal/engine/cmdline"
	"github.com/wlcdev/wlc/internal/recipes"
)

// derivePD adds a pd_cluster rendering's values to d: each pool becomes
// disagg.<role> (one instance on the pool's nodes, its port, its
// kv_transfer from the role's --kv-transfer-config, its serve options and
// env), and the router's policy. It returns the reasons the rendering
// cannot be derived.
func derivePD(pd *recipes.PD, d *recipeDerivation) []string {
	var errs []string
	for _, pool := range pd.Pools {
		base := "disagg." + pool.Role
		d.values[base+".nodes"] = derivedValue{value: pool.Nodes, text: fmt.Sprintf("%s pool of %d node(s)", pool.Role, pool.Nodes), source: "strategy_overrides.pd_cluster." + pool.Role + ".nodes", pos: pool.NodesPos}
		var units []recipes.Arg
		for _, a := range pool.Args {
			switch a.Key() {
			case "--port":
				n, err := strconv.Atoi(a.Value)
				if err != nil {
					errs = append(errs, fmt.Sprintf("gives %s from %s at %s, which is not a port", strings.Join(a.Tokens(), " "), a.Source, a.Pos))
					continue
				}
				d.values[base+".port"] = derivedValue{value: n, text: strings.Join(a.Tokens(), " "), source: a.Source, pos: a.Pos}
			case "--kv-transfer-config":
				var kv map[string]any
				if err := json.Unmarshal([]byte(a.Value), &kv); err != nil {
					errs = append(errs, fmt.Sprintf("gives %s from %s at %s, which is not a KV transfer config: %v", strings.Join(a.Tokens(), " "), a.Source, a.Pos, err))
					continue
				}
				v, err := cmdline.DecodeJSON(a.Value)
				if err != nil {
					errs = append(errs, err.Error())
					continue
				}
				d.values[base+".kv_transfer"] = derivedValue{value: v, text: strings.Join(a.Tokens(), " "), source: a.Source, pos: a.Pos}
			default:
				units = append(units, a)
			}
		}
		values := map[string]derivedValue{}
		rest, msgs := deriveArgs(units, 1, values)
		for _, m := range msgs {
			errs = append(errs, pool.Role+" pool: "+m)
		}
		impliedParallelism(values)
		for k, v := range values {
			d.values[base+"."+k] = v
		}
		if len(rest) > 0 {
			d.values[base+".serve.extra_args"] = derivedValue{value: argTokens(rest), text: strings.Join(argTokens(rest), " "), source: rest[0].Source, pos: rest[0].Pos}
		}
		for _, e := range pool.Env {
			d.values[base+".env."+check.Label(e.Name)] = derivedValue{value: e.Value, text: e.Name + "=" + e.Value, source: e.Source, pos: e.Pos}
		}
	}
	d.values["disagg.router.policy"] = derivedValue{value: pd.RouterPolicy, text: "router policy " + pd.RouterPolicy, source: "strategy pd_cluster router.policy", pos: pd.RouterPos}
	if pd.RouterDP > 0 {
		d.values["disagg.router.intra_node_data_parallel_size"] = derivedValue{value: pd.RouterDP, text: fmt.Sprintf("intra_node_data_parallel_size: %d", pd.RouterDP), source: "strategy_overrides.pd_cluster.router", pos: pd.RouterPos}
	}
	return errs
}
