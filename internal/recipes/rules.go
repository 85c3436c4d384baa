package recipes

import (
	"strings"
)

// This file holds the site's selection rules (reference/recipes.md §2),
// shared by Vet and Compose.

// isGeneration reports whether k is a taxonomy generation key.
func isGeneration(k string) bool {
	switch k {
	case "hopper", "blackwell", "ada", "amd", "tpu", "cpu", "xpu", "npu":
		return true
	}
	return false
}

func isBrandKey(k string) bool {
	switch k {
	case "nvidia", "amd", "google", "intel", "huawei":
		return true
	}
	return false
}

// tiered resolves a map keyed exact GPU id > generation > lowercase brand >
// "default" (the first present wins).
func tiered(m node, p *Profile) (node, string, bool) {
	for _, k := range []string{p.ID, p.Generation, strings.ToLower(p.Brand), "default"} {
		if v := m.get(k); v.exists() {
			return v, k, true
		}
	}
	return node{}, "", false
}

// genBlock resolves a map keyed by generation, with "nvidia" as the
// brand-wide fallback used only when no generation block exists.
func genBlock(m node, p *Profile) (node, string, bool) {
	if v := m.get(p.Generation); v.exists() {
		return v, p.Generation, true
	}
	if p.Brand == "NVIDIA" {
		if v := m.get("nvidia"); v.exists() {
			return v, "nvidia", true
		}
	}
	return node{}, "", false
}

func isSingleNode(s string) bool { return strings.HasPrefix(s, "single_node_") }
func isMultiNode(s string) bool  { return strings.HasPrefix(s, "multi_node_") }

// Offered returns the strategies the site offers for r on p (rules S3, V3):
// compatible_strategies plus any strategy granted "supported" somewhere in
// strategy_hardware, filtered by strategy_hardware's tiered verdict for p;
// multi-node and PD strategies are dropped on non-scalable hardware.
func (s *Set) Offered(r *Recipe, p *Profile) []string {
	listed := r.n.get("compatible_strategies").strs()
	sh := r.n.get("strategy_hardware")
	all := append([]string(nil), listed...)
	for _, f := range sh.fields() {
		if contains(all, f.name) {
			continue
		}
		for _, g := range f.n.fields() {
			if g.n.str() == "supported" {
				all = append(all, f.name)
				break
			}
		}
	}
	var out []string
	for _, st := range all {
		verdict := ""
		if v, _, ok := tiered(sh.get(st), p); ok {
			verdict = v.str()
		}
		if verdict == "unsupported" || (!contains(listed, st) && verdict != "supported") {
			continue
		}
		if !p.Scalable && !isSingleNode(st) {
			continue
		}
		out = append(out, st)
	}
	return out
}

// VariantOffered reports whether the site offers variant vk of r on p
// (rules P1-P3, H2), and why not.
func (s *Set) VariantOffered(r *Recipe, vk string, p *Profile) (bool, string) {
	if r.n.get("meta", "hardware", p.ID).str() == "unsupported" {
		return false, "meta.hardware." + p.ID + " is unsupported"
	}
	v := r.n.get("variants", vk)
	if sh := v.get("supported_hardware"); sh.exists() && !contains(sh.strs(), p.ID) {
		return false, "supported_hardware does not list " + p.ID
	}
	prec := v.get("precision").str()
	brand, gen := "", ""
	if g := s.Schema.Precisions[prec].UpstreamGate; g != nil {
		brand, gen = g.Brand, g.Generation
	}
	if ph := v.get("precision_hardware"); ph.exists() {
		brand, gen = ph.get("brand").str(), ph.get("generation").str()
	}
	if brand != "" && brand != p.Brand {
		return false, "precision " + prec + " needs " + brand + " hardware"
	}
	if gen != "" && gen != p.Generation {
		return false, "precision " + prec + " needs generation " + gen
	}
	return true, ""
}

// MinGPUs is the strategy_min_gpus floor for strategy st on p (rule S4):
// a scalar applies to every strategy, a map by strategy id, and exact-GPU
// keys add a floor (int or per strategy); the highest wins. 0 = none.
func (r *Recipe) MinGPUs(st string, p *Profile) int {
	m := r.n.get("strategy_min_gpus")
	if i, ok := m.integer(); ok {
		return i
	}
	floor := 0
	if i, ok := m.get(st).integer(); ok && i > floor {
		floor = i
	}
	hw := m.get(p.ID)
	if i, ok := hw.integer(); ok && i > floor {
		floor = i
	}
	if i, ok := hw.get(st).integer(); ok && i > floor {
		floor = i
	}
	return floor
}

// DefaultNodes is how many nodes the site renders strategy st on p with:
// 1 for single-node strategies, else 2 raised by strategy_min_gpus (at most
// 16) — never derived from VRAM (rule V5).
func (r *Recipe) DefaultNodes(st string, p *Profile) int {
	if isSingleNode(st) {
		return 1
	}
	n := 2
	if f := r.MinGPUs(st, p); f > 0 {
		need := (f + p.GPUCount - 1) / p.GPUCount
		if need > n {
			n = need
		}
	}
	if n > 16 {
		n = 16
	}
	return n
}

// PoolNodes is the node count of a PD role from strategy_overrides.
// pd_cluster.<role>.nodes (int or {default, <gpu>}); 0 when unset.
func (r *Recipe) PoolNodes(role string, p *Profile) (int, node) {
	n := r.n.get("strategy_overrides", "pd_cluster", role, "nodes")
	if i, ok := n.integer(); ok {
		return i, n
	}
	if v := n.get(p.ID); v.exists() {
		i, _ := v.integer()
		return i, v
	}
	if v := n.get("default"); v.exists() {
		i, _ := v.integer()
		return i, v
	}
	return 0, n
}

// Variants lists the variant keys in file order.
func (r *Recipe) Variants() []string {
	var out []string
	for _, f := range r.n.get("variants").fields() {
		out = append(out, f.name)
	}
	return out
}

// VerifiedHardware lists the ids meta.hardware marks verified, in order.
func (r *Recipe) VerifiedHardware() []string {
	var out []string
	for _, f := range r.n.get("meta", "hardware").fields() {
		if f.n.str() == "verified" {
			out = append(out, f.name)
		}
	}
	return out
}

// shardsAcrossNodes reports whether strategy st spreads r's weights over
// all of its nodes, so that memory adds up across them. TP and PP shard
// every layer; tp_dp (TP within a node, DP across nodes) keeps one replica
// of a dense model per node, but a MoE model's experts are sharded across
// every TP×DP rank: vLLM's FusedMoEParallelConfig.make
// (vllm/model_executor/layers/fused_moe/config.py) flattens the MoE
// layers' TP over dp_size × tp_size ranks (flatten_tp_across_dp_and_pcp),
// or splits the experts over them with expert parallelism. Only attention
// and dense layers stay replicated per node, and the recipes give no split
// of the weights, so a MoE model's capacity is counted over all nodes.
func (r *Recipe) shardsAcrossNodes(st *Strategy) bool {
	if st.Parallelism != "tp_dp" {
		return st.DeployType != "single_node"
	}
	return r.n.get("model", "architecture").str() == "moe"
}
