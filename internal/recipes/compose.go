package recipes

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/wlcdev/wlc/internal/diag"
)

// Request selects one rendering of a recipe.
type Request struct {
	// Recipe is the model id (<org>/<repo>, case-insensitive) or the
	// recipe's model.model_id.
	Recipe string
	// Hardware is a taxonomy id (b200, gb200, mi355x, ...).
	Hardware string
	// Variant defaults to "default"; Strategy to the site's recommendation;
	// Nodes (0) to 1, or 2 when the variant does not fit one node and a
	// multi-node strategy is offered (raised by strategy_min_gpus).
	Variant, Strategy string
	Nodes             int
	// Features turns features on (name or name=mode); NoFeatures off.
	Features, NoFeatures []string
}

// EnvVar is one environment variable of the command.
type EnvVar struct {
	Name, Value, Source string
	Pos                 Pos
}

// Command is a resolved `vllm serve` rendering.
type Command struct {
	Recipe, Variant, Strategy, Hardware string
	// Model is the served checkpoint (the variant's model_id or the
	// recipe's); ModelPos is where the recipe names it.
	Model    string
	ModelPos Pos
	// Precision is the variant's precision as the recipe spells it (see
	// Schema.Precisions for wlc's name); PrecisionPos is where.
	Precision    string
	PrecisionPos Pos
	// VRAMMinimumGB is the variant's vram_minimum_gb (the recipes' rule:
	// checkpoint GB × 1.2), 0 when the variant has none; VRAMPos is where.
	VRAMMinimumGB int
	VRAMPos       Pos
	// Image is the image and vLLM floor the recipe pins for this rendering.
	Image Image
	// File is the recipe file's display name.
	File  string
	Nodes int
	GPUs  int
	Env   []EnvVar
	// Args holds the flag units per node rank (one entry on single node);
	// empty for pd_cluster, whose roles are in PD.
	Args [][]Arg
	PD   *PD
	// Findings are conflicts resolved by last-wins and capacity warnings;
	// errors mean the request cannot be rendered (Args is then empty).
	Findings Findings
}

// Argv returns the argv of rank (after `vllm serve`): the model, then the
// flag units as written, or with canonical spellings.
func (c *Command) Argv(rank int, canonical bool) []string {
	out := []string{c.Model}
	for _, a := range c.Args[rank] {
		if canonical {
			out = append(out, a.Canonical()...)
		} else {
			out = append(out, a.Tokens()...)
		}
	}
	return out
}

// EnvMap returns the environment as a map.
func (c *Command) EnvMap() map[string]string {
	m := map[string]string{}
	for _, e := range c.Env {
		m[e.Name] = e.Value
	}
	return m
}

// Find returns the recipe whose path id or model_id is id (case-insensitive).
func (s *Set) Find(id string) *Recipe {
	for _, r := range s.Recipes {
		if r.ID == id || r.ModelID == id {
			return r
		}
	}
	for _, r := range s.Recipes {
		if strings.EqualFold(r.ID, id) || strings.EqualFold(r.ModelID, id) {
			return r
		}
	}
	return nil
}

type composer struct {
	s        *Set
	r        *Recipe
	p        *Profile
	st       *Strategy
	vk       string
	variant  node
	so       node // strategy_overrides.<strategy>
	c        *Command
	env      []EnvVar
	envIndex map[string]int
}

func (c *composer) errorf(at node, format string, args ...any) {
	p := at.pos()
	c.c.Findings = append(c.c.Findings, Finding{Kind: "compose", Diagnostic: diag.Diagnostic{Severity: diag.Error, File: p.File, Line: p.Line, Column: p.Column, Message: fmt.Sprintf(format, args...)}})
}

func (c *composer) warnf(kind string, at Pos, format string, args ...any) {
	c.c.Findings = append(c.c.Findings, Finding{Kind: kind, Diagnostic: diag.Diagnostic{Severity: diag.Warning, File: at.File, Line: at.Line, Column: at.Column, Message: fmt.Sprintf(format, args...)}})
}

// Compose resolves req the way the recipes site's resolveCommand does
// (reference/recipes.md §3.1/§3.2) for single-node and multi-node
// strategies: the layers in order, last wins per flag, but with flags
// compared by canonical spelling and every overridden value reported.
func Compose(s *Set, req Request) *Command {
	cmd := &Command{Hardware: req.Hardware}
	c := &composer{s: s, c: cmd, envIndex: map[string]int{}}
	r := s.Find(req.Recipe)
	if r == nil {
		var ids []string
		for _, x := range s.Recipes {
			ids = append(ids, x.ID)
		}
		c.errorf(node{file: s.Dir}, "no recipe %q in %s (models/<org>/<repo>.yaml); have: %s", req.Recipe, s.Dir, strings.Join(ids, ", "))
		return cmd
	}
	c.r, cmd.Recipe, cmd.File = r, r.ID, r.n.file
	p := s.Profiles[req.Hardware]
	if p == nil {
		var ids []string
		for id := range s.Profiles {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		c.errorf(s.taxonomy.get("hardware_profiles"), "unknown hardware %q; taxonomy.yaml has %s", req.Hardware, strings.Join(ids, ", "))
		return cmd
	}
	c.p = p
	vk := req.Variant
	if vk == "" {
		vk = "default"
	}
	c.vk, cmd.Variant = vk, vk
	c.variant = r.n.get("variants", vk)
	if !c.variant.exists() {
		c.errorf(r.n.get("variants"), "recipe %s has no variant %q; it has %s", r.ID, vk, strings.Join(r.Variants(), ", "))
		return cmd
	}
	if ok, why := s.VariantOffered(r, vk, p); !ok {
		// The site hides a variant its precision gate or allowlist rules
		// out, but a recipe that tunes the variant for this GPU (a
		// hardware_overrides block for it, its generation or its
		// architecture) says it runs here: render it, and say so.
		key, tuned := s.tunedKey(c.variant, p)
		if !tuned || r.n.get("meta", "hardware", p.ID).str() == "unsupported" {
			c.errorf(c.variant, "variant %s is not offered on %s: %s", vk, p.ID, why)
			return cmd
		}
		c.warnf("variant-hidden", c.variant.pos(), "the site does not offer variant %s on %s (%s), but the recipe tunes it for %s (variants.%s.hardware_overrides.%s): rendered with those overrides", vk, p.ID, why, p.ID, vk, key)
	}
	cmd.Image = c.image()
	if strings.ContainsAny(cmd.Image.Ref, " \t") {
		c.warnf("docker-image", cmd.Image.Pos, "%s %q is not an image reference (it contains spaces); the image is %q", cmd.Image.From, cmd.Image.Ref, cmd.Image.Ref[strings.LastIndexAny(cmd.Image.Ref, " \t")+1:])
	}
	vram, _ := c.variant.get("vram_minimum_gb").integer()
	offered := s.Offered(r, p)
	if len(offered) == 0 {
		c.errorf(r.n.get("compatible_strategies"), "recipe %s offers no strategy on %s", r.ID, p.ID)
		return cmd
	}

	// Strategy and node count (rules S5, S11, V5).
	name, nodes := req.Strategy, req.Nodes
	if name == "" {
		name, nodes = c.recommend(offered, nodes, vram)
	}
	if !contains(offered, name) {
		c.errorf(r.n.get("compatible_strategies"), "strategy %s is not offered for %s on %s; offered: %s", name, r.ID, p.ID, strings.Join(offered, ", "))
		return cmd
	}
	c.st = s.Strategies[name]
	if c.st == nil {
		c.errorf(r.n.get("compatible_strategies"), "strategy %s has no file in strategies/", name)
		return cmd
	}
	switch c.st.DeployType {
	case "pd_cluster":
		// The pools decide the nodes (composePD); the request's count is
		// checked against them by the workload's schema rules.
	case "single_node":
		if nodes > 1 {
			c.errorf(c.st.n.get("deploy_type"), "%s runs on one node; drop --nodes %d or pick a multi_node_* strategy", name, nodes)
			return cmd
		}
		nodes = 1
	default:
		if nodes == 1 {
			c.errorf(c.st.n.get("deploy_type"), "%s spans nodes; --nodes must be at least 2", name)
			return cmd
		}
		if nodes == 0 {
			nodes = r.DefaultNodes(name, p)
		}
	}
	cmd.Strategy, cmd.Nodes, cmd.GPUs = name, nodes, nodes*p.GPUCount
	c.so = r.n.get("strategy_overrides", name)
	if c.st.DeployType == "pd_cluster" {
		c.checkPrecision()
		if cmd.Findings.Diags().HasErrors() {
			return cmd
		}
		cmd.Model, cmd.ModelPos = r.ModelID, r.n.get("model", "model_id").pos()
		if m := c.variant.get("model_id"); m.exists() {
			cmd.Model, cmd.ModelPos = m.str(), m.pos()
		}
		cmd.Precision, cmd.PrecisionPos = c.variant.get("precision").str(), c.variant.get("precision").pos()
		cmd.VRAMMinimumGB, cmd.VRAMPos = vram, c.variant.get("vram_minimum_gb").pos()
		cmd.PD = c.composePD(c.features(req))
		if cmd.PD != nil {
			cmd.Nodes = 0
			for _, pool := range cmd.PD.Pools {
				cmd.Nodes += pool.Nodes
			}
			cmd.GPUs = cmd.Nodes * p.GPUCount
		}
		return cmd
	}

	// Structural and capacity checks of this rendering.
	st := c.st
	if st.DeployType == "single_node" && (p.GPUCount < st.MinGPUs || (st.MaxGPUs > 0 && p.GPUCount > st.MaxGPUs)) {
		c.errorf(st.n.get("hardware_match"), "%s needs %d–%d GPUs on one node (hardware_match) but %s has %d", name, st.MinGPUs, st.MaxGPUs, p.ID, p.GPUCount)
		return cmd
	}
	if st.MoE && r.n.get("model", "architecture").str() != "moe" {
		c.errorf(st.n.get("hardware_match", "architecture"), "%s needs a MoE model but %s is %s", name, r.ID, r.n.get("model", "architecture").str())
		return cmd
	}
	c.checkPrecision()
	capacity, replica := nodes*p.VRAMGB, ""
	if nodes > 1 && !r.shardsAcrossNodes(st) {
		capacity, replica = p.VRAMGB, ", one replica of the dense model per node"
	}
	if vram > capacity {
		c.warnf("memory", c.variant.get("vram_minimum_gb").pos(), "variant %s needs %d GB but this rendering has %d GB (%d × %s node of %d GB%s); use --nodes %d",
			vk, vram, capacity, nodes, p.ID, p.VRAMGB, replica, (vram+p.VRAMGB-1)/p.VRAMGB)
	}
	if len(cmd.Findings.Diags()) > 0 && cmd.Findings.Diags().HasErrors() {
		return cmd
	}

	cmd.Model, cmd.ModelPos = r.ModelID, r.n.get("model", "model_id").pos()
	if m := c.variant.get("model_id"); m.exists() {
		cmd.Model, cmd.ModelPos = m.str(), m.pos()
	}
	cmd.Precision, cmd.PrecisionPos = c.variant.get("precision").str(), c.variant.get("precision").pos()
	cmd.VRAMMinimumGB, cmd.VRAMPos = vram, c.variant.get("vram_minimum_gb").pos()
	features := c.features(req)
	for rank := 0; rank < nodes; rank++ {
		args, conflicts := dedupe(c.args(rank, features))
		cmd.Args = append(cmd.Args, args)
		if rank == 0 {
			for _, k := range conflicts {
				c.reportConflict(k)
			}
		}
	}
	c.envs()
	cmd.Env = c.env
	return cmd
}

// recommend picks the strategy and node count the site recommends (S11).
func (c *composer) recommend(offered []string, nodes, vram int) (string, int) {
	var multi []string
	for _, s := range offered {
		if isMultiNode(s) {
			multi = append(multi, s)
		}
	}
	if nodes == 0 {
		nodes = 1
		if vram > c.p.VRAMGB && len(multi) > 0 {
			nodes = 2
		}
	}
	def := c.r.n.get("default_strategy").str()
	if nodes > 1 {
		if def != "" {
			sib := strings.Replace(def, "single_node_", "multi_node_", 1)
			if contains(offered, sib) {
				return sib, nodes
			}
		}
		for _, s := range []string{"multi_node_tp", "multi_node_dep", "multi_node_tep"} {
			if contains(offered, s) {
				return s, nodes
			}
		}
		if len(multi) > 0 {
			return multi[0], nodes
		}
	}
	if def != "" && contains(offered, def) && isSingleNode(def) {
		return def, 1
	}
	if contains(offered, "single_node_tp") {
		return "single_node_tp", 1
	}
	return offered[0], nodes
}

// checkPrecision asks wlc's catalog whether the hardware runs the
// variant's precision (the site only gates nvfp4/fp4).
func (c *composer) checkPrecision() {
	s := c.s
	prec := c.variant.get("precision").str()
	info, ok := s.Schema.Precisions[prec]
	if !ok {
		// The site renders any precision (it gates only nvfp4/fp4).
		c.warnf("precision", c.variant.get("precision").pos(), "precision %q is outside the documented enum and wlc's recipe_precisions table, so wlc cannot tell which hardware runs it; rendered as the site renders it", prec)
		return
	}
	arch, wlcName, mapped := s.Schema.Architecture(c.p)
	if !mapped || info.WLC == "none" {
		return
	}
	if _, ok := s.Schema.Architectures[arch].Weights[info.WLC]; !ok {
		if key, tuned := s.tunedKey(c.variant, c.p); tuned {
			c.warnf("precision", c.variant.get("precision").pos(), "wlc's hardware catalog knows no kernel for %s on %s (%s), but the recipe tunes variant %s for it (hardware_overrides.%s); rendered as the recipe says", info.WLC, wlcName, arch, c.vk, key)
			return
		}
		c.errorf(c.variant.get("precision"), "%s (%s) cannot run %s according to wlc's hardware catalog; pick another variant", wlcName, arch, info.WLC)
	}
}

func (c *composer) listArgs(n node, source string) []Arg {
	var toks []string
	var pos []Pos
	for _, e := range n.list() {
		toks = append(toks, e.scalar())
		pos = append(pos, e.pos())
	}
	return Group(toks, pos, source)
}

// parallel renders the computed parallel flags of rank (rule S8).
func (c *composer) parallel(rank int) []Arg {
	p, st, nodes := c.p, c.st, c.c.Nodes
	g := strconv.Itoa(p.GPUCount)
	var toks []string
	switch {
	case st.DeployType == "single_node" && st.ParallelFlag == "--data-parallel-size":
		toks = []string{"--data-parallel-size", g}
	case st.DeployType == "single_node":
		tp := p.GPUCount
		if st.Name == "single_node_tp" {
			tp = c.singleTP()
		}
		toks = []string{"--tensor-parallel-size", strconv.Itoa(tp)}
	case st.Parallelism == "tp_pp":
		toks = []string{"--tensor-parallel-size", g, "--pipeline-parallel-size", strconv.Itoa(nodes)}
		toks = append(toks, rendezvous(rank, nodes)...)
	case st.Parallelism == "tp_dp":
		toks = []string{"--tensor-parallel-size", g, "--data-parallel-size", strconv.Itoa(nodes), "--data-parallel-size-local", "1", "--data-parallel-address", "$HEAD_IP"}
		if rank > 0 {
			toks = append(toks, "--data-parallel-start-rank", strconv.Itoa(rank))
		}
	case st.ParallelFlag == "--data-parallel-size":
		toks = []string{"--data-parallel-size", strconv.Itoa(nodes * p.GPUCount), "--data-parallel-size-local", g, "--data-parallel-address", "$HEAD_IP"}
		if rank > 0 {
			toks = append(toks, "--data-parallel-start-rank", strconv.Itoa(rank*p.GPUCount))
		}
	default:
		toks = []string{"--tensor-parallel-size", strconv.Itoa(nodes * p.GPUCount)}
		toks = append(toks, rendezvous(rank, nodes)...)
	}
	pos := st.n.get("parallel_flag").pos()
	return Group(toks, []Pos{pos, pos, pos, pos, pos, pos, pos, pos, pos, pos, pos}, "computed parallelism ("+st.Name+")")
}

func rendezvous(rank, nodes int) []string {
	t := []string{"--nnodes", strconv.Itoa(nodes), "--node-rank", strconv.Itoa(rank), "--master-addr", "$HEAD_IP"}
	if rank > 0 {
		t = append(t, "--headless")
	}
	return t
}

// singleTP is single_node_tp's size (rule S7): variant tp > strategy
// override tp > auto-fit (1 if the variant fits one GPU, else all).
func (c *composer) singleTP() int {
	p := c.p
	tp := 0
	for _, n := range []node{c.variant.get("tp"), c.so.get("tp")} {
		if i, ok := n.integer(); ok {
			tp = i
			break
		}
		if v, _, ok := tiered(n, p); ok {
			tp, _ = v.integer()
			break
		}
	}
	if tp == 0 {
		vram, _ := c.variant.get("vram_minimum_gb").integer()
		tp = p.GPUCount
		if float64(vram) <= p.PerGPU() {
			tp = 1
		}
	}
	if tp > p.GPUCount && p.Generation != "cpu" {
		tp = p.GPUCount
	}
	return tp
}

// hardwareBlocks returns the step-5 override blocks in order: a strategy
// override's generation block alone, else the recipe's then the variant's
// generation blocks; then the strategy override's exact-GPU block.
func (c *composer) hardwareBlocks() []struct {
	n      node
	source string
} {
	type blk = struct {
		n      node
		source string
	}
	var out []blk
	if b, k, ok := genBlock(c.so.get("hardware_overrides"), c.p); ok {
		out = append(out, blk{b, "strategy_overrides." + c.st.Name + ".hardware_overrides." + k})
	} else {
		if b, k, ok := genBlock(c.r.n.get("hardware_overrides"), c.p); ok {
			out = append(out, blk{b, "hardware_overrides." + k})
		}
		if b, k, ok := genBlock(c.variant.get("hardware_overrides"), c.p); ok {
			out = append(out, blk{b, "variants." + c.vk + ".hardware_overrides." + k})
		}
	}
	if b := c.so.get("hardware_overrides", c.p.ID); b.exists() {
		out = append(out, blk{b, "strategy_overrides." + c.st.Name + ".hardware_overrides." + c.p.ID})
	}
	return out
}

// args lists the flag units of rank in the site's order (§3.1).
func (c *composer) args(rank int, features []featureArgs) []Arg {
	var all []Arg
	add := func(n node, source string) { all = append(all, c.listArgs(n, source)...) }
	add(c.r.n.get("model", "base_args"), "model.base_args")
	add(c.variant.get("extra_args"), "variants."+c.vk+".extra_args")
	add(c.variant.get("hardware_overrides", c.p.ID, "extra_args"), "variants."+c.vk+".hardware_overrides."+c.p.ID+".extra_args")
	add(c.st.n.get("vllm_args"), "strategy "+c.st.Name+" vllm_args")
	all = append(all, c.parallel(rank)...)
	add(c.so.get("extra_args"), "strategy_overrides."+c.st.Name+".extra_args")
	add(c.so.get("vllm_args"), "strategy_overrides."+c.st.Name+".vllm_args")
	for _, b := range c.hardwareBlocks() {
		add(b.n.get("extra_args"), b.source+".extra_args")
	}
	for _, f := range features {
		add(f.args, f.source)
	}
	return all
}

type featureArgs struct {
	args   node
	source string
}

// features resolves the enabled features in recipe key order (F1-F5).
func (c *composer) features(req Request) []featureArgs {
	r, p := c.r, c.p
	optIn := r.n.get("opt_in_features").strs()
	optIn = append(optIn, r.n.get("hardware_opt_in_features", p.ID).strs()...)
	want := map[string]string{}
	for _, f := range req.Features {
		name, mode, _ := strings.Cut(f, "=")
		want[name] = mode
		if !r.n.get("features", name).exists() {
			c.errorf(r.n.get("features"), "recipe %s has no feature %q", r.ID, name)
		}
	}
	var out []featureArgs
	for _, f := range r.n.get("features").fields() {
		mode, picked := want[f.name]
		dm := c.variant.get("default_modes", f.name)
		on := !contains(optIn, f.name) || dm.exists() || picked
		if contains(req.NoFeatures, f.name) {
			on = false
		}
		if !on {
			continue
		}
		if allow := f.n.get("strategies"); allow.exists() && !contains(allow.strs(), c.st.Name) {
			continue
		}
		src := "features." + f.name
		if modes := f.n.get("modes"); modes.exists() {
			if mode == "" && dm.exists() {
				mode = dm.str()
			}
			if mode == "" {
				mode = f.n.get("default_mode").str()
			}
			allowed := func(m node) bool {
				if vs := m.get("variants"); vs.exists() && !contains(vs.strs(), c.vk) {
					return false
				}
				hw := m.get("hardware")
				return hw.get(p.ID).str() != "unsupported" && hw.get(p.Generation).str() != "unsupported"
			}
			if mode == "" || !modes.get(mode).exists() || !allowed(modes.get(mode)) {
				mode = ""
				for _, m := range modes.fields() {
					if allowed(m.n) {
						mode = m.name
						break
					}
				}
			}
			if mode == "" {
				continue
			}
			m := modes.get(mode)
			args, src := m.get("args"), src+".modes."+mode+".args"
			if o, k, ok := tiered(m.get("hardware_overrides"), p); ok {
				args, src = o.get("args"), "features."+f.name+".modes."+mode+".hardware_overrides."+k+".args"
			}
			out = append(out, featureArgs{args, src})
			continue
		}
		args := f.n.get("args")
		if o, k, ok := genBlock(f.n.get("hardware_overrides"), p); ok {
			args, src = o.get("args"), src+".hardware_overrides."+k
		}
		out = append(out, featureArgs{args, src + ".args"})
	}
	return out
}

func (c *composer) setEnv(n node, source string) {
	for _, f := range n.fields() {
		e := EnvVar{Name: f.name, Value: f.n.scalar(), Source: source, Pos: f.n.pos()}
		if i, ok := c.envIndex[f.name]; ok {
			old := c.env[i]
			if old.Value != e.Value {
				c.warnf("conflict", e.Pos, "env %s: %q from %s (%s) is replaced by %q from %s", f.name, old.Value, old.Source, old.Pos, e.Value, source)
			}
			c.env[i].Value, c.env[i].Source, c.env[i].Pos = e.Value, e.Source, e.Pos
			continue
		}
		c.envIndex[f.name] = len(c.env)
		c.env = append(c.env, e)
	}
}

// envs merges the environment in the site's order (§3.2, non-PD).
func (c *composer) envs() {
	c.setEnv(c.r.n.get("model", "base_env"), "model.base_env")
	c.setEnv(c.variant.get("extra_env"), "variants."+c.vk+".extra_env")
	c.setEnv(c.variant.get("hardware_overrides", c.p.ID, "extra_env"), "variants."+c.vk+".hardware_overrides."+c.p.ID+".extra_env")
	c.setEnv(c.st.n.get("env"), "strategy "+c.st.Name+" env")
	c.setEnv(c.so.get("env"), "strategy_overrides."+c.st.Name+".env")
	c.setEnv(c.so.get("extra_env"), "strategy_overrides."+c.st.Name+".extra_env")
	for _, b := range c.hardwareBlocks() {
		c.setEnv(b.n.get("extra_env"), b.source+".extra_env")
	}
}

func (c *composer) reportConflict(k Conflict) {
	last := k.Units[len(k.Units)-1]
	var parts []string
	spellings := map[string]bool{}
	for _, u := range k.Units[:len(k.Units)-1] {
		parts = append(parts, fmt.Sprintf("%s from %s (%s)", strings.Join(u.Tokens(), " "), u.Source, u.Pos))
		spellings[u.Flag] = true
	}
	spellings[last.Flag] = true
	note := ""
	if len(spellings) > 1 {
		note = " (spelled differently, so the site's spelling-sensitive dedupe would pass both to vLLM)"
	}
	c.warnf("conflict", last.Pos, "%s is set more than once with different values%s: %s is overridden by %s from %s, which wins; remove the losing value or make them agree",
		k.Key, note, strings.Join(parts, " and "), strings.Join(last.Tokens(), " "), last.Source)
}

// Script renders the command for people: exports, then one `vllm serve`
// per node with one flag unit per line.
func (c *Command) Script(canonical bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s variant %s, %s on %d × %s (%d GPUs)\n", c.Recipe, c.Variant, c.Strategy, c.Nodes, c.Hardware, c.GPUs)
	b.WriteString(c.Image.comment())
	if c.PD != nil {
		c.pdScript(&b, canonical)
		return b.String()
	}
	if len(c.Env) > 0 && c.Nodes > 1 {
		b.WriteString("# env (every node)\n")
	}
	for _, e := range c.Env {
		fmt.Fprintf(&b, "export %s=%s\n", e.Name, shellQuote(e.Value))
	}
	for rank := range c.Args {
		if c.Nodes > 1 {
			role := "head"
			if rank > 0 {
				role = "worker"
			}
			fmt.Fprintf(&b, "# node %d (%s)\n", rank, role)
		}
		b.WriteString("vllm serve " + shellQuote(c.Model))
		for _, a := range c.Args[rank] {
			toks := a.Tokens()
			if canonical {
				toks = a.Canonical()
			}
			for i := range toks {
				toks[i] = shellQuote(toks[i])
			}
			b.WriteString(" \\\n  " + strings.Join(toks, " "))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// pdScript renders each pool's instance and the router (wlc's launcher
// adds the data-parallel ranks, addresses and RPC ports per node).
func (c *Command) pdScript(b *strings.Builder, canonical bool) {
	for _, pool := range c.PD.Pools {
		fmt.Fprintf(b, "# %s: %d node(s), %s\n", pool.Role, pool.Nodes, pool.Mode)
		for _, e := range pool.Env {
			fmt.Fprintf(b, "export %s=%s\n", e.Name, shellQuote(e.Value))
		}
		b.WriteString("vllm serve " + shellQuote(c.Model))
		for _, a := range pool.Args {
			toks := a.Tokens()
			if canonical {
				toks = a.Canonical()
			}
			for i := range toks {
				toks[i] = shellQuote(toks[i])
			}
			b.WriteString(" \\\n  " + strings.Join(toks, " "))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "# router\nvllm-router --policy %s --vllm-pd-disaggregation --prefill <prefill URL> --decode <decode URL per node>\n", c.PD.RouterPolicy)
}
