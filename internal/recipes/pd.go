package recipes

import (
	"strconv"
	"strings"
)

// PD is a pd_cluster rendering: one pool per role behind a router, in
// the form wlc's disagg runs (one instance per role on whole nodes).
type PD struct {
	// Pools are prefill, then decode.
	Pools []Pool
	// RouterPolicy is the strategy's router.policy; RouterDP the recipe's
	// strategy_overrides.pd_cluster.router.intra_node_data_parallel_size
	// (0 when unset).
	RouterPolicy string
	RouterPos    Pos
	RouterDP     int
}

// Pool is one role's instance.
type Pool struct {
	Role string
	// Nodes is the pool's node count (strategy_overrides.pd_cluster.<role>.
	// nodes, else as many as the variant's memory needs).
	Nodes    int
	NodesPos Pos
	// Mode is tp, tep or dep.
	Mode string
	// Args are the role's flag units after dedupe, the parallel sizes
	// included; the data-parallel ranks, addresses and ports of a
	// multi-node pool are the launcher's, not here.
	Args []Arg
	Env  []EnvVar
}

// nvl4Env are the variables the site keeps only on gb200/gb300 PD pools.
var nvl4Env = []string{"VLLM_USE_NCCL_SYMM_MEM", "NCCL_CUMEM_ENABLE", "NCCL_MNNVL_ENABLE", "NCCL_NVLS_ENABLE", "UCX_NET_DEVICES"}

// composePD renders a pd_cluster strategy (reference/recipes.md §3.3):
// each role's arguments and environment in the site's layer order, with
// the pool parallelism computed per role. wlc runs each pool as one
// instance on whole nodes, so the site's co-location of both roles on one
// node is not rendered, and a tensor-parallel pool stays within a node.
func (c *composer) composePD(features []featureArgs) *PD {
	r, p, st := c.r, c.p, c.st
	vram, _ := c.variant.get("vram_minimum_gb").integer()
	pd := &PD{RouterPolicy: st.n.get("router", "policy").str(), RouterPos: st.n.get("router", "policy").pos()}
	if pd.RouterPolicy == "" {
		pd.RouterPolicy = "round_robin"
	}
	if n, ok := c.so.get("router", "intra_node_data_parallel_size").integer(); ok {
		pd.RouterDP = n
	}
	for _, role := range []string{"prefill", "decode"} {
		ro := c.so.get(role)
		nodes, at := r.PoolNodes(role, p)
		if nodes == 0 {
			nodes = 1
			if vram > p.VRAMGB {
				nodes = (vram + p.VRAMGB - 1) / p.VRAMGB
			}
		}
		pool := Pool{Role: role, Nodes: nodes, NodesPos: at.pos(), Mode: "tp"}
		if m := ro.get("parallelism").str(); m != "" {
			pool.Mode = m
		}
		g := p.GPUCount
		var par []string
		switch pool.Mode {
		case "dep":
			tp := 1
			if n, ok := ro.get("tp").integer(); ok && n > 0 {
				tp = n
			}
			par = []string{"--data-parallel-size", strconv.Itoa(nodes * g / tp), "--enable-expert-parallel"}
			if tp > 1 {
				par = append(par, "--tensor-parallel-size", strconv.Itoa(tp))
			}
		case "tep", "tp":
			if nodes > 1 {
				c.errorf(at, "the %s pool is %s on %d nodes: wlc keeps a disaggregated instance's tensor-parallel group within a node; set strategy_overrides.pd_cluster.%s.parallelism: dep or nodes: 1", role, pool.Mode, nodes, role)
				return nil
			}
			par = []string{"--tensor-parallel-size", strconv.Itoa(g)}
			if pool.Mode == "tep" {
				par = append(par, "--enable-expert-parallel")
			}
		default:
			c.errorf(ro.get("parallelism"), "unknown %s pool parallelism %q (tp, tep or dep)", role, pool.Mode)
			return nil
		}
		pos := ro.get("parallelism").pos()
		var all []Arg
		add := func(n node, source string) { all = append(all, c.listArgs(n, source)...) }
		add(r.n.get("model", "base_args"), "model.base_args")
		add(c.variant.get("extra_args"), "variants."+c.vk+".extra_args")
		add(c.variant.get("hardware_overrides", p.ID, "extra_args"), "variants."+c.vk+".hardware_overrides."+p.ID+".extra_args")
		add(st.n.get(role, "vllm_args"), "strategy "+st.Name+" "+role+".vllm_args")
		ps := make([]Pos, len(par))
		for i := range ps {
			ps[i] = pos
		}
		all = append(all, Group(par, ps, "computed "+role+" pool parallelism ("+pool.Mode+")")...)
		add(c.so.get("extra_args"), "strategy_overrides."+st.Name+".extra_args")
		add(c.so.get("vllm_args"), "strategy_overrides."+st.Name+".vllm_args")
		add(ro.get("extra_args"), "strategy_overrides."+st.Name+"."+role+".extra_args")
		add(ro.get("vllm_args"), "strategy_overrides."+st.Name+"."+role+".vllm_args")
		for _, b := range c.hardwareBlocks() {
			add(b.n.get("extra_args"), b.source+".extra_args")
		}
		add(ro.get("hardware_overrides", p.ID, "extra_args"), "strategy_overrides."+st.Name+"."+role+".hardware_overrides."+p.ID+".extra_args")
		for _, f := range features {
			add(f.args, f.source)
		}
		args, conflicts := dedupe(all)
		for _, k := range conflicts {
			c.reportConflict(k)
		}
		pool.Args = args

		c.env, c.envIndex = nil, map[string]int{}
		c.setEnv(r.n.get("model", "base_env"), "model.base_env")
		c.setEnv(c.variant.get("extra_env"), "variants."+c.vk+".extra_env")
		c.setEnv(c.variant.get("hardware_overrides", p.ID, "extra_env"), "variants."+c.vk+".hardware_overrides."+p.ID+".extra_env")
		c.setEnv(st.n.get(role, "env"), "strategy "+st.Name+" "+role+".env")
		c.setEnv(c.so.get("env"), "strategy_overrides."+st.Name+".env")
		c.setEnv(ro.get("env"), "strategy_overrides."+st.Name+"."+role+".env")
		for _, b := range c.hardwareBlocks() {
			c.setEnv(b.n.get("extra_env"), b.source+".extra_env")
		}
		c.setEnv(ro.get("hardware_overrides", p.ID, "extra_env"), "strategy_overrides."+st.Name+"."+role+".hardware_overrides."+p.ID+".extra_env")
		for _, e := range c.env {
			if p.ID != "gb200" && p.ID != "gb300" && contains(nvl4Env, e.Name) {
				continue
			}
			// The node-specific address variables ($PREFILL_NODE_1, ...)
			// are the site's placeholders; wlc's launcher sets the NIXL
			// side-channel host of every node itself.
			if e.Name == "VLLM_NIXL_SIDE_CHANNEL_HOST" || e.Name == "CUDA_VISIBLE_DEVICES" {
				continue
			}
			if strings.Contains(e.Value, "$") {
				c.warnf("pd", e.Pos, "env %s=%s names a node of the site's launch script; wlc's launcher does not define it, so it is left out", e.Name, e.Value)
				continue
			}
			pool.Env = append(pool.Env, e)
		}
		pd.Pools = append(pd.Pools, pool)
	}
	c.env, c.envIndex = nil, map[string]int{}
	return pd
}
