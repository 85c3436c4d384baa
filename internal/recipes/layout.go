package recipes

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/wlcdev/wlc/internal/diag"
)

// This file holds the vet rules that read the flags a recipe writes
// against the parallel layout its strategies render: a tensor-parallel
// size the strategy overrides, --omni written by hand, and a layout that
// needs more GPUs on a node than the node has.

// Strategies lists the strategy ids the site offers r with on some
// hardware (effectiveCompatibleStrategies in command-synthesis.js): the
// listed ones, then those granted "supported" in strategy_hardware.
func (r *Recipe) Strategies() []string {
	out := append([]string(nil), r.n.get("compatible_strategies").strs()...)
	for _, f := range r.n.get("strategy_hardware").fields() {
		if contains(out, f.name) {
			continue
		}
		for _, g := range f.n.fields() {
			if g.n.str() == "supported" {
				out = append(out, f.name)
				break
			}
		}
	}
	return out
}

// isOmni reports whether the site renders r through resolveOmniCommand
// (meta.tasks includes omni), which has no strategy.
func (r *Recipe) isOmni() bool { return contains(r.n.get("meta", "tasks").strs(), "omni") }

// setsTP reports whether the site's buildArgs emits --tensor-parallel-size
// for st on r: every strategy but the data-parallel ones (parallel_flag
// --data-parallel-size), and a pd_cluster unless both pools are dep pools
// without an explicit tp.
func (r *Recipe) setsTP(st *Strategy) bool {
	switch {
	case st.DeployType == "pd_cluster":
		for _, role := range []string{"prefill", "decode"} {
			ro := r.n.get("strategy_overrides", "pd_cluster", role)
			mode := ro.get("parallelism").str()
			if mode == "" {
				mode = st.n.get(role, "parallelism").str()
			}
			if mode != "dep" || ro.get("tp").exists() || st.n.get(role, "tp").exists() {
				return true
			}
		}
		return false
	case st.Parallelism == "tp_pp" || st.Parallelism == "tp_dp":
		return true
	}
	return st.ParallelFlag != "--data-parallel-size"
}

// argLists are the argv lists of r that the site places before the
// strategy's parallel flags (buildArgs steps 1 and 2), with their paths.
func (r *Recipe) argLists() []struct {
	n    node
	path string
} {
	type list = struct {
		n    node
		path string
	}
	out := []list{{r.n.get("model", "base_args"), "model.base_args"}}
	for _, vk := range r.Variants() {
		vn := r.n.get("variants", vk)
		out = append(out, list{vn.get("extra_args"), "variants." + vk + ".extra_args"})
		for _, f := range vn.get("hardware_overrides").fields() {
			if !isGeneration(f.name) && f.name != "nvidia" {
				out = append(out, list{f.n.get("extra_args"), "variants." + vk + ".hardware_overrides." + f.name + ".extra_args"})
			}
		}
	}
	return out
}

func units(n node, source string) []Arg {
	var toks []string
	var pos []Pos
	for _, e := range n.list() {
		toks = append(toks, e.scalar())
		pos = append(pos, e.pos())
	}
	return Group(toks, pos, source)
}

// argsBeforeStrategy reports --tensor-parallel-size written where the
// strategy's own parallel flags come later and win (last-wins dedupe), and
// --omni written in an omni recipe's base_args.
func (v *vetter) argsBeforeStrategy(r *Recipe) {
	if r.isOmni() {
		for _, a := range units(r.n.get("model", "base_args"), "model.base_args") {
			if a.Key() == "--omni" {
				v.cite("omni-flag", KindOmniFlag, diag.Warning, nodeAt(a.Pos), "model.base_args",
					"%s in base_args of an omni recipe: the site appends --omni itself (resolveOmniCommand emits it last and its dedupe drops this one), so it changes nothing on the site but duplicates the flag wherever base_args are read alone; remove it", a.Flag)
			}
		}
		return
	}
	var setters, keepers []string
	for _, name := range r.Strategies() {
		if st := v.s.Strategies[name]; st != nil {
			if r.setsTP(st) {
				setters = append(setters, name)
			} else {
				keepers = append(keepers, name)
			}
		}
	}
	if len(setters) == 0 {
		return
	}
	for _, l := range r.argLists() {
		for _, a := range units(l.n, l.path) {
			if a.Key() != "--tensor-parallel-size" {
				continue
			}
			fix := "strategy_overrides.single_node_tp.tp (a number or a per-hardware map)"
			if vk, ok := strings.CutPrefix(l.path, "variants."); ok {
				fix = "variants." + vk[:strings.Index(vk, ".")] + ".tp (a number or a per-hardware map)"
			}
			also := ""
			if len(keepers) > 0 {
				also = fmt.Sprintf("; under %s, which emit no TP, it survives and multiplies the GPUs each data-parallel rank needs", strings.Join(keepers, ", "))
			}
			v.cite("tp-in-args", KindParallelArgs, diag.Error, nodeAt(a.Pos), l.path,
				"%s %s in %s comes before the parallel flags of %s, which set their own TP and win (the site keeps the last of each flag), so they drop it and the TP they render is theirs, whatever this says%s; remove it and set the size in %s",
				a.Flag, a.Value, l.path, strings.Join(setters, ", "), also, fix)
		}
	}
}

// posNode is a position Group recorded, to report a finding at.
type posNode Pos

func (p posNode) pos() Pos { return Pos(p) }

func nodeAt(p Pos) posNode { return posNode(p) }

// render returns the flag units the site renders for rank 0 of strategy st
// on p with variant vk and the default features, deduplicated last-wins.
func (s *Set) render(r *Recipe, p *Profile, st *Strategy, vk string) []Arg {
	c := &composer{s: s, r: r, p: p, st: st, vk: vk, variant: r.n.get("variants", vk),
		so: r.n.get("strategy_overrides", st.Name), c: &Command{Nodes: r.DefaultNodes(st.Name, p)}, envIndex: map[string]int{}}
	args, _ := dedupe(c.args(0, c.features(Request{})))
	return args
}

// gpusPerNode is how many GPUs one node of a rendering occupies: each of
// its data-parallel ranks (--data-parallel-size-local, else
// --data-parallel-size) holds a TP×PP group, and a group spanning
// --nnodes nodes puts 1/nnodes of it on each. blame is the last unit the
// recipe wrote among those flags (the strategy's computed ones excluded).
func gpusPerNode(args []Arg) (gpus int, layout string, blame *Arg) {
	flags := []string{"--tensor-parallel-size", "--pipeline-parallel-size", "--data-parallel-size", "--data-parallel-size-local", "--nnodes"}
	val := map[string]int{}
	for i, a := range args {
		k := a.Key()
		if !contains(flags, k) {
			continue
		}
		n, err := strconv.Atoi(a.Value)
		if err != nil || n < 1 {
			return 0, "", nil // a $VAR or a typo: no layout to check
		}
		val[k] = n
		if !strings.HasPrefix(a.Source, "computed ") {
			blame = &args[i]
		}
	}
	get := func(k string) int {
		if n, ok := val[k]; ok {
			return n
		}
		return 1
	}
	dp := get("--data-parallel-size")
	if n, ok := val["--data-parallel-size-local"]; ok {
		dp = n
	}
	nnodes := get("--nnodes")
	world := get("--tensor-parallel-size") * get("--pipeline-parallel-size")
	gpus = dp * ((world + nnodes - 1) / nnodes)
	var parts []string
	for _, k := range flags {
		if n, ok := val[k]; ok {
			parts = append(parts, k+" "+strconv.Itoa(n))
		}
	}
	return gpus, strings.Join(parts, " "), blame
}

// gpusPerNodeCheck renders every strategy the site offers on the
// hardware r marks verified, for every variant offered there, and reports
// layouts that need more GPUs on a node than it has: vLLM gives
// data-parallel rank i of a node the devices [i×world, (i+1)×world) and
// fails at startup when they do not exist (get_device_indices in
// vllm/v1/engine/utils.py). One finding per flag the recipe wrote.
func (v *vetter) gpusPerNodeCheck(r *Recipe) {
	type group struct {
		blame                             Arg
		layouts, hw, strategies, variants []string
	}
	groups := map[Pos]*group{}
	var order []Pos
	add := func(list *[]string, x string) {
		if !contains(*list, x) {
			*list = append(*list, x)
		}
	}
	for _, hid := range r.VerifiedHardware() {
		p := v.s.Profiles[hid]
		if p == nil {
			continue
		}
		for _, name := range v.s.Offered(r, p) {
			st := v.s.Strategies[name]
			if st == nil || st.DeployType == "pd_cluster" {
				continue
			}
			for _, vk := range r.Variants() {
				if ok, _ := v.s.VariantOffered(r, vk, p); !ok {
					continue
				}
				gpus, layout, blame := gpusPerNode(v.s.render(r, p, st, vk))
				if gpus <= p.GPUCount || blame == nil {
					continue
				}
				g := groups[blame.Pos]
				if g == nil {
					g = &group{blame: *blame}
					groups[blame.Pos] = g
					order = append(order, blame.Pos)
				}
				add(&g.layouts, fmt.Sprintf("%s = %d GPUs per node", layout, gpus))
				add(&g.hw, fmt.Sprintf("%s (%d)", p.ID, p.GPUCount))
				add(&g.strategies, name)
				add(&g.variants, vk)
			}
		}
	}
	for _, at := range order {
		g := groups[at]
		v.cite("verified", KindGPUsPerNode, diag.Error, nodeAt(at), g.blame.Source,
			"%s %s here makes the site render %s (variants %s) on verified %s as %s, more than the node has: vLLM fails at startup (each data-parallel rank takes its own TP×PP devices); set it only for the hardware it fits (an exact-GPU hardware_overrides block), or mark strategy_hardware.<strategy>.<gpu>: unsupported for %s there",
			g.blame.Flag, g.blame.Value, strings.Join(g.strategies, ", "), strings.Join(g.variants, ", "), strings.Join(g.hw, ", "), strings.Join(g.layouts, "; "), strings.Join(g.strategies, ", "))
	}
}
