package load

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"cuelang.org/go/cue"

	"github.com/wlcdev/wlc/internal/check"
	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/internal/engine/cmdline"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/recipes"
	"github.com/wlcdev/wlc/schema"
)

// A workload with a `recipe` (see #RecipeRef) is derived before it is
// validated: the recipe is composed for the profile's hardware and the
// workload's node count (recipes.Compose), and the composed `vllm serve`
// command becomes typed values filled into the workload (model, precision,
// serve options, env) plus argv tokens no typed option holds, which lead
// serve.extra_args. Every schema rule then applies to derived values as to
// written ones.
//
// A value the workload writes itself must agree with the derived one: a
// contradiction is an error at the workload's value naming the recipe's
// file:line:col. Fields the recipe leaves unset may be added freely.
//
// Env merges profile < recipe < workload: the recipe is model-specific
// tuning its authors verified, so it overrides a fleet-wide profile
// default (with a warning when the values differ), and the workload, the
// most specific, may only add to the recipe (a different value for a
// variable the recipe sets is a contradiction like any other).

// derivedValue is one value taken from the recipe and where it came from.
type derivedValue struct {
	value  any
	text   string // as the recipe writes it, e.g. "--tensor-parallel-size 8"
	source string // the recipe layer
	pos    recipes.Pos
}

// recipeDerivation is what one workload's recipe contributes.
type recipeDerivation struct {
	wv     cue.Value // the workload with the derived values filled in
	path   cue.Path  // the workload's path in the package
	fill   map[string]any
	base   string
	origin *plan.RecipeOrigin
	cmd    *recipes.Command
	// values are keyed by workload path: model, precision,
	// serve.<field>, env.<NAME>.
	values map[string]derivedValue
	args   []recipes.Arg
	at     string // "the recipe X (variant v, strategy s on hw)"
}

// recipeSet loads the recipes directory once per load.
func (l *loader) recipeSet() (*recipes.Set, error) {
	if l.recipes != nil || l.recipesErr != nil {
		return l.recipes, l.recipesErr
	}
	if l.opts.RecipesDir == "" {
		l.recipesErr = fmt.Errorf("no recipes directory is given: pass --recipes DIR (a github.com/vllm-project/recipes checkout: taxonomy.yaml, strategies/, models/), set WLC_RECIPES, or set settings.recipes in the workloads package")
		return nil, l.recipesErr
	}
	// The recipe schema is a package of its own, built only now that a
	// workload derives from a recipe.
	sch, err := recipes.CompileSchema(l.ctx)
	if err != nil {
		l.recipesErr = err
		return nil, err
	}
	l.recipes, l.recipesErr = recipes.LoadWith(l.ctx, sch, l.opts.RecipesDir, l.cwd)
	if l.recipesErr != nil && l.opts.RecipesFrom != "" {
		l.recipesErr = fmt.Errorf("the recipes directory from %s: %w", l.opts.RecipesFrom, l.recipesErr)
	}
	return l.recipes, l.recipesErr
}

// deriveRecipe derives wv from its recipe. It returns nil when wv has no
// recipe (or one too malformed to read: validation reports it), and false
// when the workload cannot be derived (the reason is reported).
func (l *loader) deriveRecipe(wv cue.Value) (*recipeDerivation, bool) {
	rv := wv.LookupPath(pathOf("recipe"))
	if !rv.Exists() {
		return nil, true
	}
	var ref schema.RecipeRef
	if err := rv.Decode(&ref); err != nil || ref.Model == "" {
		// Report the malformed recipe alone: the rest of the workload
		// would only miss what it should have derived.
		if !l.validate(rv, l.pkg) {
			return nil, false
		}
		return nil, true
	}
	sels := wv.Path().Selectors()
	name := selLabel(sels[len(sels)-1])
	d := &recipeDerivation{base: "workloads." + check.Label(name), values: map[string]derivedValue{}}
	errf := func(field, format string, args ...any) bool {
		l.report(diag.Error, d.base, wv, field, format, args...)
		return false
	}

	set, err := l.recipeSet()
	if err != nil {
		return nil, errf("recipe", "workload %s derives from the recipe %s, but %v", name, ref.Model, err)
	}
	profile, _ := wv.LookupPath(pathOf("profile")).String()
	prof, known := l.res.Profiles[profile]
	if !known {
		// Without the profile nothing can be derived; the rest of the
		// workload would only miss what it should have derived.
		var names []string
		it, _ := l.pkg.LookupPath(pathProfiles).Fields()
		for it != nil && it.Next() {
			names = append(names, it.Selector().Unquoted())
		}
		return nil, errf("profile", "unknown profile %s; known profiles: %s", profile, strings.Join(names, ", "))
	}
	hwID := recipeHardwareID(set, prof.Hardware)
	if hwID == "" {
		return nil, errf("recipe", "profile %s runs on %s, which no hardware id of the recipes taxonomy maps to (recipe_hardware in schema/recipe/recipe.cue); this workload cannot derive from a recipe", prof.Name, prof.Hardware)
	}
	nodes := 1
	if n, err := wv.LookupPath(pathOf("nodes")).Int64(); err == nil {
		nodes = int(n)
	}
	cmd := recipes.Compose(set, recipes.Request{
		Recipe: ref.Model, Hardware: hwID, Variant: ref.Variant, Strategy: ref.Strategy, Nodes: nodes,
		Features: ref.Features, NoFeatures: ref.NoFeatures,
	})
	d.cmd = cmd
	failed := false
	for _, f := range cmd.Findings.Diags() {
		where := f.File
		if f.Line > 0 {
			where = fmt.Sprintf("%s:%d:%d", f.File, f.Line, f.Column)
		}
		sev := diag.Warning
		if f.Severity == diag.Error {
			sev, failed = diag.Error, true
		}
		l.report(sev, d.base, wv, "recipe", "recipe %s on %s: %s (%s)", ref.Model, hwID, f.Message, where)
	}
	if failed || (len(cmd.Args) == 0 && cmd.PD == nil) {
		return nil, false
	}
	d.at = fmt.Sprintf("the recipe %s (variant %s, strategy %s on %s", cmd.Recipe, cmd.Variant, cmd.Strategy, hwID)
	d.origin = &plan.RecipeOrigin{
		Recipe: cmd.Recipe, File: cmd.File, Variant: cmd.Variant, Strategy: cmd.Strategy, Hardware: hwID,
		Nodes: cmd.Nodes, Features: ref.Features, NoFeatures: ref.NoFeatures,
	}

	// model and precision.
	d.values["model"] = derivedValue{value: cmd.Model, text: cmd.Model, source: "the variant's checkpoint", pos: cmd.ModelPos}
	info, ok := set.Schema.Precisions[cmd.Precision]
	if !ok || info.WLC == "none" {
		return nil, errf("recipe", "%s) has precision %q, which wlc's #Precision has no name for (recipe_precisions in schema/recipe/recipe.cue) at %s", d.at, cmd.Precision, cmd.PrecisionPos)
	}
	d.values["precision"] = derivedValue{value: info.WLC, text: "precision: " + cmd.Precision, source: "variant " + cmd.Variant, pos: cmd.PrecisionPos}
	// The memory-fit check reads the checkpoint size from the variant:
	// vram_minimum_gb is the recipes' checkpoint GB × 1.2.
	if cmd.VRAMMinimumGB > 0 {
		gib := math.Round(float64(cmd.VRAMMinimumGB)/1.2*1e9/(1<<30)*10) / 10
		d.values["checkpoint_gib"] = derivedValue{value: gib, text: fmt.Sprintf("vram_minimum_gb: %d", cmd.VRAMMinimumGB), source: "variant " + cmd.Variant, pos: cmd.VRAMPos}
	}

	if cmd.PD != nil {
		// A pd_cluster rendering: the pools and the router.
		for _, m := range derivePD(cmd.PD, d) {
			errf("recipe", "%s) %s", d.at, m)
			failed = true
		}
		if failed {
			return nil, false
		}
		return l.finishDerivation(wv, d, prof)
	}

	// argv, rank 0; the other ranks may differ only in launch flags.
	head, msgs := deriveArgs(cmd.Args[0], nodes, d.values)
	for _, m := range msgs {
		errf("recipe", "%s) %s", d.at, m)
	}
	if len(msgs) > 0 {
		return nil, false
	}
	for rank := 1; rank < len(cmd.Args); rank++ {
		other, _ := deriveArgs(cmd.Args[rank], nodes, map[string]derivedValue{})
		if !sameTokens(head, other) {
			return nil, errf("recipe", "%s) renders node %d with other flags than node 0 (%s vs %s); wlc starts every node with one argv", d.at, rank, strings.Join(argTokens(other), " "), strings.Join(argTokens(head), " "))
		}
	}
	d.args = head
	d.origin.Args = argTokens(head)
	impliedParallelism(d.values)

	// env: recipe over profile, contradictions with the workload.
	for _, e := range cmd.Env {
		d.values["env."+check.Label(e.Name)] = derivedValue{value: e.Value, text: e.Name + "=" + e.Value, source: e.Source, pos: e.Pos}
		d.origin.Env = append(d.origin.Env, e.Name)
		if pv, set := prof.Env[e.Name]; set && pv != e.Value {
			l.report(diag.Warning, d.base, wv, "recipe", "%s) sets %s=%s (%s at %s) over profile %s's %s=%s", d.at, e.Name, e.Value, e.Source, e.Pos, prof.Name, e.Name, pv)
		}
	}

	return l.finishDerivation(wv, d, prof)
}

// finishDerivation reports every derived value the workload contradicts
// and prepares the values to fill into the package.
func (l *loader) finishDerivation(wv cue.Value, d *recipeDerivation, prof schema.Profile) (*recipeDerivation, bool) {
	errf := func(field, format string, args ...any) bool {
		l.report(diag.Error, d.base, wv, field, format, args...)
		return false
	}
	// Contradictions: every derived value the workload also writes.
	ok := true
	for _, path := range slices.Sorted(maps.Keys(d.values)) {
		dv := d.values[path]
		uv := wv.LookupPath(pathOf(path))
		if !l.userPos(uv).IsValid() || uv.Err() != nil {
			continue
		}
		if err := uv.Unify(l.ctx.Encode(dv.value)).Validate(); err == nil {
			continue
		}
		ok = errf(path, "%s contradicts %s gives %s from %s at %s); remove it, or pick another variant, strategy or features", valueText(uv), d.at, dv.text, dv.source, dv.pos)
	}
	if !l.checkRecipeExtraArgs(wv, d) {
		ok = false
	}
	if !ok {
		return nil, false
	}

	// Fill the derived values into the package.
	fill := map[string]any{}
	for path, dv := range d.values {
		sels := cue.ParsePath(path).Selectors()
		m := fill
		for _, s := range sels[:len(sels)-1] {
			k := selLabel(s)
			if m[k] == nil {
				m[k] = map[string]any{}
			}
			m = m[k].(map[string]any)
		}
		m[selLabel(sels[len(sels)-1])] = dv.value
	}
	// Filled by fillDerived, once for every derived workload: a FillPath
	// re-evaluates the whole package, so one per workload was quadratic.
	d.path, d.fill = wv.Path(), fill
	return d, true
}

// fillDerived fills every derivation's values into the package in one
// step and points each derivation at its filled workload.
func (l *loader) fillDerived(ds []*recipeDerivation) {
	all := map[string]any{}
	for _, d := range ds {
		sels := d.path.Selectors()
		all[selLabel(sels[len(sels)-1])] = d.fill
	}
	if len(all) == 0 {
		return
	}
	l.pkg = l.pkg.FillPath(pathWorkloads, l.ctx.Encode(all))
	for _, d := range ds {
		d.wv = l.pkg.LookupPath(d.path)
	}
}

// checkRecipeExtraArgs compares the workload's own extra_args with the
// recipe's untyped argv: the same flag with another value contradicts the
// recipe; the same value repeats it.
func (l *loader) checkRecipeExtraArgs(wv cue.Value, d *recipeDerivation) bool {
	var own []string
	if err := wv.LookupPath(pathOf("serve.extra_args")).Decode(&own); err != nil {
		return true
	}
	byKey := map[string]recipes.Arg{}
	for _, a := range d.args {
		byKey[a.Key()] = a
	}
	ok := true
	for i := 0; i < len(own); i++ {
		tok := own[i]
		if !cmdline.IsOption(tok) {
			continue
		}
		flag, val, eq := strings.Cut(tok, "=")
		if !eq && i+1 < len(own) && !cmdline.IsOption(own[i+1]) {
			val = own[i+1]
		}
		r, set := byKey[recipes.Arg{Flag: flag}.Key()]
		if !set {
			continue
		}
		field := fmt.Sprintf("serve.extra_args[%d]", i)
		if val != r.Value {
			l.report(diag.Error, d.base, wv, field, "%s contradicts %s gives %s from %s at %s); remove it, or pick another variant, strategy or features", strings.TrimSpace(tok+" "+map[bool]string{true: "", false: val}[eq]), d.at, strings.Join(r.Tokens(), " "), r.Source, r.Pos)
			ok = false
			continue
		}
		l.report(diag.Warning, d.base, wv, field, "%s repeats the recipe (%s at %s), which already passes it; remove it", tok, r.Source, r.Pos)
	}
	return ok
}

// deriveArgs splits one rank's composed flag units into typed values
// (added to values, keyed serve.<field>) and the untyped rest. Launch
// flags are dropped after checking them against nodes. It returns the
// reasons the argv cannot be derived.
func deriveArgs(units []recipes.Arg, nodes int, values map[string]derivedValue) ([]recipes.Arg, []string) {
	var rest []recipes.Arg
	var errs []string
	bad := func(a recipes.Arg, format string, args ...any) {
		errs = append(errs, fmt.Sprintf("gives %s from %s at %s, but %s", strings.Join(a.Tokens(), " "), a.Source, a.Pos, fmt.Sprintf(format, args...)))
	}
	var dpLocal *recipes.Arg
	for i, a := range units {
		m, isOption := cmdline.VLLMServe.Resolve(a.Flag)
		if !isOption {
			why := ""
			if i > 0 && cmdline.IsOption(units[i-1].Flag) && !units[i-1].HasValue {
				why = fmt.Sprintf(" (%s before it is a switch and takes no value)", units[i-1].Flag)
			}
			bad(a, "vLLM reads it as a positional argument after the model%s and refuses it", why)
			continue
		}
		f := m.Flag
		text := strings.Join(a.Tokens(), " ")
		if strings.Contains(a.Value, "$HEAD_IP") && (f == nil || !f.Launch) {
			bad(a, "$HEAD_IP is set only by the recipes site's launch script")
			continue
		}
		switch {
		case f == nil:
			rest = append(rest, a)
			continue
		case f.Launch:
			switch m.Option {
			case "--nnodes":
				if n, err := strconv.Atoi(a.Value); err != nil || n != nodes {
					bad(a, "the workload runs on %d node(s)", nodes)
				}
			case "--distributed-executor-backend":
				if a.Value != "mp" {
					bad(a, "wlc's runner starts vLLM with multiprocessing (mp) only")
				}
			case "--data-parallel-size-local":
				a := a
				dpLocal = &a
			}
			continue
		case f.Field == "":
			bad(a, "%s is set by wlc (the workload's model, the runner's host and port)", m.Option)
			continue
		}
		prev, seen := values[f.Field]
		v, err := m.Typed(a.Value, a.HasValue, prev.value)
		if err != nil {
			bad(a, "%v", err)
			continue
		}
		if seen && f.Kind == cmdline.JSON && m.Key != "" {
			text = prev.text + " " + text
		}
		values[f.Field] = derivedValue{value: v, text: text, source: a.Source, pos: a.Pos}
	}
	if dpLocal != nil {
		dp := 1
		if v, ok := values["serve.data_parallel_size"].value.(int); ok {
			dp = v
		}
		if n, err := strconv.Atoi(dpLocal.Value); err != nil || n*nodes != dp {
			bad(*dpLocal, "data_parallel_size %d over %d node(s) is %d per node", dp, nodes, dp/max(nodes, 1))
		}
	}
	return rest, errs
}

// impliedParallelism completes the layout: a strategy renders the parallel
// sizes it uses, and the others are 1 (DEP's --data-parallel-size 8 means
// tensor_parallel_size 1), so a workload cannot reshape the layout by
// setting a size the recipe leaves out.
func impliedParallelism(values map[string]derivedValue) {
	sizes := []string{"serve.tensor_parallel_size", "serve.data_parallel_size", "serve.pipeline_parallel_size"}
	var ref *derivedValue
	for _, s := range sizes {
		if v, ok := values[s]; ok {
			ref = &v
			break
		}
	}
	if ref == nil {
		return
	}
	for _, s := range sizes {
		if _, ok := values[s]; !ok {
			values[s] = derivedValue{value: 1, text: ref.text + " with " + strings.TrimPrefix(s, "serve.") + " 1", source: ref.source, pos: ref.pos}
		}
	}
}

func argTokens(units []recipes.Arg) []string {
	var out []string
	for _, a := range units {
		out = append(out, a.Tokens()...)
	}
	return out
}

func sameTokens(a, b []recipes.Arg) bool {
	x, y := argTokens(a), argTokens(b)
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

// recipeHardwareID is the recipes taxonomy id mapped to wlc's hardware
// name (recipe_hardware), or "".
func recipeHardwareID(s *recipes.Set, hw string) string {
	var ids []string
	for id, name := range s.Schema.HardwareMap {
		if name == hw {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	if len(ids) == 0 {
		return ""
	}
	return ids[0]
}

// valueText renders a user's value for a message.
func valueText(v cue.Value) string {
	if d, ok := v.Default(); ok {
		v = d
	}
	b, err := v.MarshalJSON()
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// blameDerived moves findings reported since before on values the
// workload does not write (so they came from the recipe) to the recipe
// field, naming where the recipe sets them.
func (d *recipeDerivation) blameDerived(l *loader, before int) {
	if d == nil {
		return
	}
	pos := l.userPos(d.wv.LookupPath(pathOf("recipe")))
	for i := before; i < len(l.res.Diags); i++ {
		dg := &l.res.Diags[i]
		for path, dv := range d.values {
			full := d.base + "." + path
			if dg.Path != full && !strings.HasPrefix(dg.Path, full+".") {
				continue
			}
			if l.userPos(d.wv.LookupPath(pathOf(path))).IsValid() {
				continue
			}
			dg.Message += fmt.Sprintf("; derived from %s gives %s from %s at %s)", d.at, dv.text, dv.source, dv.pos)
			if pos.IsValid() {
				dg.File, dg.Line, dg.Column = l.rel(pos.Filename()), pos.Line(), pos.Column()
			}
		}
	}
}

// apply completes a decoded workload: the recipe's untyped argv leads
// extra_args, and the origin is kept for show.
func (d *recipeDerivation) apply(w *Workload) {
	if d == nil {
		return
	}
	w.Serve.ExtraArgs = append(argTokens(d.args), w.Serve.ExtraArgs...)
	w.Recipe = d.origin
}

// ownExtraArgs is the index of the first extra_args entry the workload
// wrote (the recipe's argv comes first).
func (w *Workload) ownExtraArgs() int {
	if w.Recipe == nil {
		return 0
	}
	return len(w.Recipe.Args)
}
