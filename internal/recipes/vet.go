package recipes

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/schema"
)

// Finding kinds. Severity is decided per kind (see Vet).
const (
	KindSchema            = "schema"
	KindUnknownHardware   = "unknown-hardware"
	KindHardwareStatus    = "hardware-status"
	KindUnknownPrecision  = "unknown-precision"
	KindVocabulary        = "vocabulary"
	KindStrategyMatch     = "strategy-hardware-match"
	KindMemoryNode        = "memory-per-node"
	KindMemoryNodes       = "memory-per-strategy-nodes"
	KindPrecisionHardware = "precision-hardware"
	KindExclusiveFeatures = "exclusive-features"
	KindModelIDPath       = "model-id-path"
	KindDates             = "dates"
	KindUnknownReference  = "unknown-reference"
	KindDockerImage       = "docker-image"
	KindCatalog           = "taxonomy-catalog"
	KindParallelArgs      = "parallel-args"
	KindOmniFlag          = "omni-base-args"
	KindGPUsPerNode       = "gpus-per-node"
)

// Finding is a diagnostic with the kind of rule that produced it and, for
// every error, the site rule it states (a key of SiteRules).
type Finding struct {
	Kind string
	Rule string
	diag.Diagnostic
}

// Findings is what Vet returns.
type Findings []Finding

// Diags returns the findings as a sorted diag.List.
func (f Findings) Diags() diag.List {
	var l diag.List
	for _, x := range f {
		l = append(l, x.Diagnostic)
	}
	return l.Sorted()
}

type vetter struct {
	s   *Set
	out Findings
}

// positioned is what a finding is reported at: a node, or a position.
type positioned interface{ pos() Pos }

func (v *vetter) add(kind string, sev diag.Severity, at positioned, path, format string, args ...any) {
	p := at.pos()
	v.out = append(v.out, Finding{Kind: kind, Diagnostic: diag.Diagnostic{
		Severity: sev, File: p.File, Line: p.Line, Column: p.Column, Path: path, Message: fmt.Sprintf(format, args...),
	}})
}

// cite adds a finding that states the site rule named rule, quoted at the
// end of its message.
func (v *vetter) cite(rule, kind string, sev diag.Severity, at positioned, path, format string, args ...any) {
	r, ok := SiteRules[rule]
	if !ok {
		panic("recipes: no site rule " + rule)
	}
	v.add(kind, sev, at, path, format+" ["+r.String()+"]", args...)
	v.out[len(v.out)-1].Rule = rule
}

// Vet checks the loaded set for what the upstream build never checks.
//
// Severities: an error is a statement, true of the recipe, that breaks a
// rule of the site's own source and quotes it (SiteRules): a reference to
// nothing (unknown hardware ids, features, modes, strategies, keys the
// site reads per generation only), a model_id that is not the file's repo,
// two features the site itself never combines, an image name that is not
// one, a YAML key outside the format, a variant whose weights alone
// exceed every layout offered on hardware the recipe marks verified, a
// --tensor-parallel-size the strategies' own overrides (CLAUDE.md forbids
// it), and a rendered layout that needs more GPUs on a node than verified
// hardware has (certain to fail at startup). A warning is data the site
// tolerates or wlc merely doubts: hardware_match (which the site never
// reads) not met, e.g. expert parallelism on a 1-GPU device; no variant
// offered on verified hardware fitting one node; values outside the
// documented vocabulary (a meta.hardware value, a dependency brand no
// profile has); --omni written in an omni recipe's base_args (the site
// adds and dedupes it); a precision wlc's catalog knows no kernel for on
// a GPU the recipe does not tune the variant for (a fallback vLLM has is
// no finding at all); dates out of order; taxonomy memory no reading of
// the device's memory in GB or GiB gives.
func Vet(s *Set) Findings {
	v := &vetter{s: s}
	for _, d := range s.Diags {
		f := Finding{Kind: KindSchema, Diagnostic: d}
		if d.Severity == diag.Error {
			f.Rule = "schema"
			f.Message += " [" + SiteRules["schema"].String() + "]"
		}
		v.out = append(v.out, f)
	}
	v.taxonomy()
	for _, st := range sortedStrategies(s) {
		v.strategy(st)
	}
	for _, r := range s.Recipes {
		v.recipe(r)
	}
	slices.SortStableFunc(v.out, func(a, b Finding) int { return diag.Compare(a.Diagnostic, b.Diagnostic) })

	return v.out
}

func sortedStrategies(s *Set) []*Strategy {
	var out []*Strategy
	for _, st := range s.Strategies {
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (v *vetter) taxonomy() {
	s := v.s
	for _, f := range s.taxonomy.get("hardware_profiles").fields() {
		p := s.Profiles[f.name]
		wlc, ok := s.Schema.HardwareMap[p.ID]
		if !ok {
			v.add(KindCatalog, diag.Warning, f.n, "hardware_profiles."+p.ID,
				"hardware profile %s has no entry in wlc's recipe_hardware table (schema/recipe/recipe.cue); add it, mapped to a catalog name or \"none\"", p.ID)
			continue
		}
		hw, ok := s.Schema.Hardware[wlc]
		if !ok {
			continue
		}
		if hw.GPUsPerNode != p.GPUCount {
			v.add(KindCatalog, diag.Warning, f.n.get("gpu_count"), "hardware_profiles."+p.ID+".gpu_count",
				"%s has %d GPUs per node here but wlc's catalog says %s has %d; fix whichever is wrong", p.ID, p.GPUCount, wlc, hw.GPUsPerNode)
		}
		if lo, hi, from := memoryReadings(hw); p.PerGPU() < lo-0.5 || p.PerGPU() > hi+0.5 {
			v.add(KindCatalog, diag.Warning, f.n.get("vram_gb"), "hardware_profiles."+p.ID+".vram_gb",
				"%s declares %d GB per node (%.4g GB per GPU), but %s has %s, which reads %.1f to %.1f \"GB\" per GPU whether GB means 10^9 bytes or GiB (schema/hardware.cue); memory checks use the taxonomy's %d, align one of them", p.ID, p.VRAMGB, p.PerGPU(), wlc, from, lo, hi, p.VRAMGB)
		}
	}
}

func (v *vetter) strategy(st *Strategy) {
	base := st.n.file[strings.LastIndex(st.n.file, "/")+1:]
	if want := strings.TrimSuffix(base, ".yaml"); want != st.Name {
		v.add(KindUnknownReference, diag.Warning, st.n.get("name"), "name",
			"strategy file %s is named %s inside; recipes refer to the name, so rename the file or the name", base, st.Name)
	}
	if st.DeployType == "single_node" && st.MultiNode {
		v.cite("hardware-match-unread", KindStrategyMatch, diag.Warning, st.n.get("hardware_match", "multi_node"), "hardware_match.multi_node",
			"a single_node strategy cannot require multi_node: true; set it to false (the site reads neither)")
	}
}

// hwKey classifies which keys a hardware-keyed map accepts.
type hwKey int

const (
	keyExact    hwKey = 1 << iota // a taxonomy hardware id
	keyGen                        // a generation
	keyNvidia                     // the "nvidia" brand fallback
	keyBrand                      // any lowercase brand
	keyDefault                    // "default"
	keyStrategy                   // a strategy id
)

func (v *vetter) checkKeys(m node, path string, allow hwKey, what string) {
	for _, f := range m.fields() {
		k := f.name
		ok := false
		switch {
		case allow&keyExact != 0 && v.s.Profiles[k] != nil:
			ok = true
		case allow&keyGen != 0 && isGeneration(k):
			ok = true
		case allow&keyNvidia != 0 && k == "nvidia":
			ok = true
		case allow&keyBrand != 0 && isBrandKey(k):
			ok = true
		case allow&keyDefault != 0 && k == "default":
			ok = true
		case allow&keyStrategy != 0 && v.s.Strategies[k] != nil:
			ok = true
		}
		if ok {
			continue
		}
		rule := "hardware-ids"
		if allow&keyExact == 0 {
			rule = "generation-keys"
		}
		if v.s.Profiles[k] != nil {
			v.cite(rule, KindUnknownReference, diag.Error, f.n, path+"."+k,
				"%s is a hardware id, but %s is read per %s only, so this block is never applied; move it to a variant's or strategy override's hardware_overrides", k, path, what)
			continue
		}
		v.cite(rule, KindUnknownHardware, diag.Error, f.n, path+"."+k,
			"unknown hardware key %q: %s takes %s; known hardware ids are in taxonomy.yaml (%s)", k, path, what, v.knownIDs(k))
	}
}

// knownIDs suggests the nearest taxonomy ids to k.
func (v *vetter) knownIDs(k string) string {
	var ids []string
	for id := range v.s.Profiles {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var near []string
	for _, id := range ids {
		if len(k) >= 2 && (strings.HasPrefix(id, k[:2]) || strings.Contains(id, k)) {
			near = append(near, id)
		}
	}
	if len(near) == 0 || len(near) > 6 {
		return fmt.Sprintf("%d profiles", len(ids))
	}
	return "nearest: " + strings.Join(near, ", ")
}

func (v *vetter) recipe(r *Recipe) {
	s := v.s
	n := r.n
	meta := n.get("meta")

	// Hardware ids everywhere they appear.
	for _, f := range meta.get("hardware").fields() {
		if s.Profiles[f.name] == nil {
			v.cite("hardware-ids", KindUnknownHardware, diag.Error, f.n, "meta.hardware."+f.name,
				"unknown hardware id %q: taxonomy.yaml has no such profile, so this %s mark is never shown; use a taxonomy id (%s) or add the profile", f.name, f.n.str(), v.knownIDs(f.name))
		}
		if st := f.n.str(); !contains(s.Schema.Vocabulary.HardwareStatus, st) {
			v.hardwareStatus(f.name, st, f.n)
		}
	}
	if dh := meta.get("default_hardware"); dh.exists() && s.Profiles[dh.str()] == nil {
		v.cite("hardware-ids", KindUnknownHardware, diag.Error, dh, "meta.default_hardware",
			"unknown hardware id %q: the site falls back to its own default; use a taxonomy id (%s)", dh.str(), v.knownIDs(dh.str()))
	}
	v.checkKeys(n.get("hardware_overrides"), "hardware_overrides", keyGen|keyNvidia, "generation (or nvidia)")
	v.checkKeys(n.get("hardware_opt_in_features"), "hardware_opt_in_features", keyExact, "exact hardware id")
	v.checkKeys(n.get("hardware_notes"), "hardware_notes", keyExact, "exact hardware id")
	for _, f := range n.get("strategy_hardware").fields() {
		v.checkKeys(f.n, "strategy_hardware."+f.name, keyExact|keyGen|keyBrand|keyDefault, "hardware id, generation, brand or default")
	}
	for _, f := range n.get("kv_cache_strategy_hardware").fields() {
		v.checkKeys(f.n, "kv_cache_strategy_hardware."+f.name, keyExact, "exact hardware id")
	}
	if m := n.get("strategy_min_gpus"); m.isStruct() {
		v.checkKeys(m, "strategy_min_gpus", keyExact|keyStrategy, "strategy id or hardware id")
	}
	for _, f := range n.get("strategy_overrides").fields() {
		p := "strategy_overrides." + f.name
		v.checkKeys(f.n.get("hardware_overrides"), p+".hardware_overrides", keyExact|keyGen|keyNvidia, "generation, nvidia or hardware id")
		if f.n.get("tp").isStruct() {
			v.checkKeys(f.n.get("tp"), p+".tp", keyExact|keyGen|keyBrand|keyDefault, "hardware id, generation, brand or default")
		}
		for _, role := range []string{"prefill", "decode"} {
			rn := f.n.get(role)
			v.checkKeys(rn.get("hardware_overrides"), p+"."+role+".hardware_overrides", keyExact, "exact hardware id")
			if rn.get("nodes").isStruct() {
				v.checkKeys(rn.get("nodes"), p+"."+role+".nodes", keyExact|keyDefault, "hardware id or default")
			}
		}
	}
	for _, f := range n.get("features").fields() {
		p := "features." + f.name
		v.checkKeys(f.n.get("hardware_overrides"), p+".hardware_overrides", keyGen|keyNvidia, "generation (or nvidia)")
		v.checkKeys(f.n.get("hardware"), p+".hardware", keyExact|keyGen, "hardware id or generation")
		for _, m := range f.n.get("modes").fields() {
			mp := p + ".modes." + m.name
			v.checkKeys(m.n.get("hardware_overrides"), mp+".hardware_overrides", keyExact|keyGen|keyBrand|keyDefault, "hardware id, generation, brand or default")
			v.checkKeys(m.n.get("hardware"), mp+".hardware", keyExact|keyGen, "hardware id or generation")
		}
	}

	// Vocabulary the site tolerates.
	if d := meta.get("difficulty"); d.exists() && !contains(s.Schema.Vocabulary.Difficulty, d.str()) {
		v.add(KindVocabulary, diag.Warning, d, "meta.difficulty",
			"difficulty %q is not one of %s (the documented enum); pick the closest of them", d.str(), strings.Join(s.Schema.Vocabulary.Difficulty, ", "))
	}
	// The install block keeps an entry whose brand list includes the
	// selected profile's brand (CommandBuilder.jsx: `allowed.includes(
	// hwProfile?.brand)`), so the brands are the taxonomy's profiles' brands.
	brands := v.brands()
	for i, dep := range n.get("dependencies").list() {
		for _, b := range dep.get("brand").strs() {
			if !contains(brands, b) {
				v.add(KindVocabulary, diag.Warning, dep.get("brand"), fmt.Sprintf("dependencies[%d].brand", i),
					"dependency brand %q is the brand of no hardware profile in taxonomy.yaml (%s), and the install block shows an entry only on hardware of a brand it lists, so it is never shown; use one of those brands (they are case-sensitive) or drop brand to show it everywhere", b, strings.Join(brands, ", "))
			}
		}
	}

	// model_id vs path.
	mid := n.get("model", "model_id")
	if r.ModelID != r.ID {
		if strings.EqualFold(r.ModelID, r.ID) {
			v.add(KindModelIDPath, diag.Warning, mid, "model.model_id",
				"model_id %q differs from the file path %s only in case; the site's lookup is case-insensitive but related_recipes and URLs are not: rename the file to models/%s.yaml or set model_id: %q", r.ModelID, r.Rel, r.ModelID, r.ID)
		} else {
			v.cite("model-id", KindModelIDPath, diag.Error, mid, "model.model_id",
				"model_id %q must equal the file path %s (models/<hf_org>/<hf_repo>.yaml); serve other checkpoints through a variant's model_id", r.ModelID, r.Rel)
		}
	}

	// Dates.
	da, du := meta.get("date_added"), meta.get("date_updated")
	switch {
	case !da.exists():
		v.add(KindDates, diag.Warning, meta, "meta.date_added", "date_added is missing; add the date the recipe first appeared (it is immutable)")
	case !du.exists():
		v.add(KindDates, diag.Warning, meta, "meta.date_updated", "date_updated is missing; add it (>= date_added %s)", da.str())
	case da.str() > du.str():
		v.add(KindDates, diag.Warning, du, "meta.date_updated",
			"date_updated %s is before date_added %s; date_added is immutable, so set date_updated to the last change (>= %s)", du.str(), da.str(), da.str())
	}

	// Features: references and exclusivity.
	features := map[string]node{}
	for _, f := range n.get("features").fields() {
		features[f.name] = f.n
	}
	optIn := n.get("opt_in_features").strs()
	for i, e := range n.get("opt_in_features").list() {
		if _, ok := features[e.str()]; !ok {
			v.cite("opt-in-features", KindUnknownReference, diag.Error, e, fmt.Sprintf("opt_in_features[%d]", i),
				"opt_in_features names %q, which is not a feature of this recipe; remove it or add the feature", e.str())
		}
	}
	for _, f := range n.get("hardware_opt_in_features").fields() {
		for i, e := range f.n.list() {
			if _, ok := features[e.str()]; !ok {
				v.cite("opt-in-features", KindUnknownReference, diag.Error, e, fmt.Sprintf("hardware_opt_in_features.%s[%d]", f.name, i),
					"names %q, which is not a feature of this recipe; remove it or add the feature", e.str())
			}
		}
	}
	variants := r.Variants()
	for _, vk := range variants {
		for _, dm := range n.get("variants", vk, "default_modes").fields() {
			feat, ok := features[dm.name]
			switch {
			case !ok:
				v.cite("mode-references", KindUnknownReference, diag.Error, dm.n, "variants."+vk+".default_modes."+dm.name,
					"default_modes names feature %q, which this recipe does not define", dm.name)
			case !feat.get("modes", dm.n.str()).exists():
				v.cite("mode-references", KindUnknownReference, diag.Error, dm.n, "variants."+vk+".default_modes."+dm.name,
					"feature %s has no mode %q", dm.name, dm.n.str())
			}
		}
	}
	for _, pair := range s.Schema.Vocabulary.ExclusiveFeatures {
		a, b := pair[0], pair[1]
		fa, okA := features[a]
		fb, okB := features[b]
		if !okA || !okB {
			continue
		}
		on := func(name, vk string) bool {
			if n.get("variants", vk, "default_modes", name).exists() {
				return true
			}
			return !contains(optIn, name)
		}
		for _, vk := range variants {
			if on(a, vk) && on(b, vk) {
				later := fb
				if fa.pos().Line > fb.pos().Line {
					later = fa
				}
				v.cite("exclusive-features", KindExclusiveFeatures, diag.Error, later, "features",
					"%s and %s are mutually exclusive (the site's UI clears one when the other is picked) but both are on by default for variant %s, so the rendered command carries both; add one of them to opt_in_features", a, b, vk)
				break
			}
		}
	}

	// Variants: precision, image names.
	for _, vk := range variants {
		vn := n.get("variants", vk)
		pn := vn.get("precision")
		prec := pn.str()
		info, ok := s.Schema.Precisions[prec]
		switch {
		case !ok:
			// The site shows any precision (its pill is the value upper-cased)
			// and gates only nvfp4/fp4, so this is vocabulary, not a break.
			v.cite("precision-enum", KindUnknownPrecision, diag.Warning, pn, "variants."+vk+".precision",
				"precision %q is outside the documented enum and wlc's recipe_precisions table, so no hardware gate or memory rule applies to it; use one of %s", prec, v.precisionList())
		case !info.Documented:
			v.cite("precision-enum", KindUnknownPrecision, diag.Warning, pn, "variants."+vk+".precision",
				"precision %q is not in the documented upstream enum, so the site gates it on no hardware; wlc reads it as %s", prec, info.WLC)
		}
		v.dockerImages(vn.get("docker_image"), "variants."+vk+".docker_image")
		for _, f := range vn.get("hardware_overrides").fields() {
			v.dockerImages(f.n.get("docker_image"), "variants."+vk+".hardware_overrides."+f.name+".docker_image")
		}
		v.checkKeys(vn.get("hardware_overrides"), "variants."+vk+".hardware_overrides", keyExact|keyGen|keyNvidia, "generation, nvidia or hardware id")
		if vn.get("tp").isStruct() {
			v.checkKeys(vn.get("tp"), "variants."+vk+".tp", keyExact|keyGen|keyBrand|keyDefault, "hardware id, generation, brand or default")
		}
		for i, e := range vn.get("supported_hardware").list() {
			if s.Profiles[e.str()] == nil {
				v.cite("hardware-ids", KindUnknownHardware, diag.Error, e, fmt.Sprintf("variants.%s.supported_hardware[%d]", vk, i),
					"unknown hardware id %q: the allowlist can never match it; use a taxonomy id (%s)", e.str(), v.knownIDs(e.str()))
			}
		}
	}
	v.dockerImages(n.get("model", "docker_image"), "model.docker_image")

	// Strategies against the model architecture.
	arch := n.get("model", "architecture").str()
	for i, e := range n.get("compatible_strategies").list() {
		st := s.Strategies[e.str()]
		if st == nil {
			v.cite("strategy-ids", KindUnknownReference, diag.Error, e, fmt.Sprintf("compatible_strategies[%d]", i),
				"strategy %q has no file in strategies/; add strategies/%s.yaml or remove it", e.str(), e.str())
			continue
		}
		if st.MoE && arch != "moe" {
			v.cite("hardware-match-unread", KindStrategyMatch, diag.Warning, e, fmt.Sprintf("compatible_strategies[%d]", i),
				"%s is for MoE models (hardware_match.architecture: moe) but model.architecture is %s, so its expert parallelism has no experts to spread; dense recipes typically list *_tp strategies only (CONTRIBUTING.md)", st.Name, arch)
		}
	}

	v.argsBeforeStrategy(r)

	// Per verified hardware: strategy layout, memory, precision.
	for _, hid := range r.VerifiedHardware() {
		p := s.Profiles[hid]
		if p == nil {
			continue
		}
		v.verified(r, p)
	}
	if !r.isOmni() {
		v.gpusPerNodeCheck(r)
	}
}

func (v *vetter) precisionList() string {
	var ks []string
	for k, i := range v.s.Schema.Precisions {
		if i.Documented {
			ks = append(ks, k)
		}
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}

func (v *vetter) dockerImages(n node, path string) {
	check := func(m node, p string) {
		if img := m.str(); strings.ContainsAny(img, " \t") {
			v.cite("docker-image", KindDockerImage, diag.Error, m, p,
				"docker image %q is not an image reference (it contains spaces), so `docker run` would fail; use %q", img, img[strings.LastIndexAny(img, " \t")+1:])
		}
	}
	if !n.exists() {
		return
	}
	if !n.isStruct() {
		check(n, path)
		return
	}
	for _, f := range n.fields() {
		if f.n.isStruct() {
			for _, g := range f.n.fields() {
				check(g.n, path+"."+f.name+"."+g.name)
			}
		} else {
			check(f.n, path+"."+f.name)
		}
	}
}

// verified checks one hardware profile the recipe marks verified.
func (v *vetter) verified(r *Recipe, p *Profile) {
	s := v.s
	claim := r.n.get("meta", "hardware", p.ID)
	offered := s.Offered(r, p)

	// Strategy layout (hardware_match) on this hardware.
	var badSingle []string
	for _, name := range offered {
		st := s.Strategies[name]
		if st == nil {
			continue
		}
		switch st.DeployType {
		case "single_node":
			if p.GPUCount < st.MinGPUs || (st.MaxGPUs > 0 && p.GPUCount > st.MaxGPUs) {
				badSingle = append(badSingle, name)
			}
		case "multi_node":
			nodes := r.DefaultNodes(name, p)
			if nodes*p.GPUCount < st.MinGPUs {
				v.cite("hardware-match-unread", KindStrategyMatch, diag.Warning, claim, "meta.hardware."+p.ID,
					"%s needs at least %d GPUs but renders %d × %d on %s; raise strategy_min_gpus.%s to %d", name, st.MinGPUs, nodes, p.GPUCount, p.ID, name, st.MinGPUs)
			}
		case "pd_cluster":
			pre, _ := r.PoolNodes("prefill", p)
			dec, _ := r.PoolNodes("decode", p)
			if pre > 0 && dec > 0 {
				if gpus := (pre + dec) * p.GPUCount; gpus < st.MinGPUs {
					v.cite("hardware-match-unread", KindStrategyMatch, diag.Warning, claim, "meta.hardware."+p.ID,
						"pd_cluster needs at least %d GPUs (hardware_match.min_gpus) but the recipe's pools render %d prefill + %d decode node(s) × %d GPU(s) = %d on %s; mark strategy_hardware.pd_cluster.%s: unsupported or size the pools (strategy_overrides.pd_cluster.<role>.nodes.%s)", st.MinGPUs, pre, dec, p.GPUCount, gpus, p.ID, p.ID, p.ID)
				}
			}
		}
	}
	if len(badSingle) > 0 {
		st := s.Strategies[badSingle[0]]
		rng := fmt.Sprintf("%d–%d", st.MinGPUs, st.MaxGPUs)
		if st.MaxGPUs == 0 {
			rng = fmt.Sprintf("≥ %d", st.MinGPUs)
		}
		v.cite("hardware-match-unread", KindStrategyMatch, diag.Warning, claim, "meta.hardware."+p.ID,
			"%s verified, but %s need%s %s GPUs on one node (hardware_match, which the site does not read: it still offers them here) and %s has %d; mark strategy_hardware.<strategy>.%s: unsupported for %s",
			p.ID, strings.Join(badSingle, ", "), plural(len(badSingle)), rng, p.ID, p.GPUCount, p.ID, strings.Join(badSingle, ", "))
	}

	// Memory and precision per variant offered here. The single-node
	// warning is about the verified mark: it stands when some variant
	// offered here fits one node (the site renders the others on more
	// nodes, rule V5), so it is reported only when none does.
	var here []string
	fitsOne := ""
	for _, vk := range r.Variants() {
		if ok, _ := s.VariantOffered(r, vk, p); ok {
			here = append(here, vk)
			if vram, _ := r.n.get("variants", vk, "vram_minimum_gb").integer(); vram <= p.VRAMGB && fitsOne == "" {
				fitsOne = vk
			}
		}
	}
	for _, vk := range here {
		vn := r.n.get("variants", vk)
		vram, _ := vn.get("vram_minimum_gb").integer()
		var singles, multis, pds []string
		for _, name := range offered {
			switch st := s.Strategies[name]; {
			case isSingleNode(name):
				singles = append(singles, name)
			case name == "pd_cluster":
				pds = append(pds, name)
			case st != nil && r.shardsAcrossNodes(st):
				multis = append(multis, name)
			}
		}
		// On non-scalable hardware the site disables variants that do not
		// fit (rule V3), so nothing broken is rendered there.
		if vram > p.VRAMGB && len(singles) > 0 && p.Scalable && fitsOne == "" {
			need := (vram + p.VRAMGB - 1) / p.VRAMGB
			sev, how := diag.Warning, fmt.Sprintf("no variant offered here fits one node, so the verified run spanned ≥ %d nodes with a multi-node strategy; if so, mark strategy_hardware.<strategy>.%s: unsupported for the single-node ones", need, p.ID)
			// vram_minimum_gb is the weights × 1.2 (CONTRIBUTING.md's
			// formula): only weights that alone exceed the node make the
			// rendered command certain to fail; within the headroom it
			// may still start with a smaller KV cache.
			weights := float64(vram) / 1.2
			if len(multis) == 0 && len(pds) == 0 {
				how = fmt.Sprintf("no offered strategy spans nodes here: add a multi_node_* strategy or drop %s's verified mark for this variant (supported_hardware)", p.ID)
				if weights > float64(p.VRAMGB) {
					sev = diag.Error
				}
			}
			if weights <= float64(p.VRAMGB) {
				how += fmt.Sprintf("; the weights alone (%d GB / 1.2 ≈ %.0f GB) fit the node, so if the verified run was single-node, vram_minimum_gb overstates what it needs: set it to what that run used", vram, weights)
			}
			v.cite("vram", KindMemoryNode, sev, vn.get("vram_minimum_gb"), "variants."+vk+".vram_minimum_gb",
				"variant %s needs %d GB but one %s node has %d GB (%d × %g GB): %s cannot serve it on this verified hardware, which the site offers it on; %s",
				vk, vram, p.ID, p.VRAMGB, p.GPUCount, p.PerGPU(), strings.Join(singles, ", "), how)
		}
		var short []string
		for _, name := range offered {
			if !isMultiNode(name) {
				continue
			}
			nodes := r.DefaultNodes(name, p)
			capacity := nodes * p.VRAMGB
			if st := s.Strategies[name]; st != nil && !r.shardsAcrossNodes(st) {
				if vram > p.VRAMGB {
					short = append(short, fmt.Sprintf("%s holds one full replica of this dense model per node (%d GB)", name, p.VRAMGB))
				}
				continue
			}
			if vram > capacity {
				need := (vram + p.VRAMGB - 1) / p.VRAMGB
				short = append(short, fmt.Sprintf("%s renders %d nodes = %d GB (needs %d: set strategy_min_gpus.%s: %d)", name, nodes, capacity, need, name, need*p.GPUCount))
			}
		}
		if len(pds) > 0 {
			for _, role := range []string{"prefill", "decode"} {
				nodes, _ := r.PoolNodes(role, p)
				if nodes > 0 && vram > nodes*p.VRAMGB {
					need := (vram + p.VRAMGB - 1) / p.VRAMGB
					short = append(short, fmt.Sprintf("pd_cluster's %s pool renders %d node(s) = %d GB (needs %d: set strategy_overrides.pd_cluster.%s.nodes.%s: %d)", role, nodes, nodes*p.VRAMGB, need, role, p.ID, need))
				}
			}
		}
		if len(short) > 0 {
			v.add(KindMemoryNodes, diag.Warning, vn.get("vram_minimum_gb"), "variants."+vk+".vram_minimum_gb",
				"variant %s needs %d GB on %s (%d GB per node), but %s", vk, vram, p.ID, p.VRAMGB, strings.Join(short, "; "))
		}

		// Precision against wlc's catalog.
		prec := vn.get("precision").str()
		info, known := s.Schema.Precisions[prec]
		arch, wlcName, mapped := s.Schema.Architecture(p)
		if !known || info.WLC == "none" || !mapped {
			continue
		}
		facts := s.Schema.Architectures[arch]
		if _, ok := facts.Weights[info.WLC]; ok {
			continue // native or a fallback kernel: it runs
		}
		// A variant the recipe tunes for this hardware (its own
		// hardware_overrides block for the GPU or its generation) is the
		// authors' word that it runs there, through whatever path; wlc's
		// catalog not knowing that path is no claim about the recipe.
		if _, tuned := s.tunedKey(vn, p); tuned {
			continue
		}
		var runs, can []string
		for w := range facts.Weights {
			runs = append(runs, w)
		}
		sort.Strings(runs)
		for _, other := range r.VerifiedHardware() {
			if op := s.Profiles[other]; op != nil {
				if a, _, ok := s.Schema.Architecture(op); ok {
					if _, ok := s.Schema.Architectures[a].Weights[info.WLC]; ok {
						can = append(can, other)
					}
				}
			}
		}
		fix := "restrict it with supported_hardware"
		if len(can) > 0 {
			fix = fmt.Sprintf("restrict it with supported_hardware: [%s]", strings.Join(can, ", "))
		}
		// A warning: the site gates only nvfp4/fp4 and lets a variant
		// widen that for a runtime fallback, and wlc's catalog may lack a
		// fallback vLLM has; the data is suspect, not shown false.
		v.cite("precision-gate", KindPrecisionHardware, diag.Warning, vn.get("precision"), "variants."+vk+".precision",
			"variant %s (%s) is offered on verified %s, but wlc's catalog knows no vLLM kernel, native or fallback, for %s on %s (%s; it has %s) and the recipe tunes the variant for no GPU of that architecture; %s, or add the kernel path to schema/hardware.cue with its source",
			vk, prec, p.ID, info.WLC, wlcName, arch, strings.Join(runs, ", "), fix)
	}
}

// tunedKey reports whether variant vn carries a hardware_overrides block
// for p: its exact id, its generation ("nvidia" on NVIDIA), or another GPU
// of p's architecture in wlc's catalog (a block for h100 says the format
// runs on sm_90, so on an h200 as well); key is the block's key.
func (s *Set) tunedKey(vn node, p *Profile) (key string, ok bool) {
	ho := vn.get("hardware_overrides")
	if ho.get(p.ID).exists() {
		return p.ID, true
	}
	if _, k, ok := genBlock(ho, p); ok {
		return k, true
	}
	arch, _, _ := s.Schema.Architecture(p)
	for _, f := range ho.fields() {
		if q := s.Profiles[f.name]; q != nil && arch != "" {
			if a, _, ok := s.Schema.Architecture(q); ok && a == arch {
				return f.name, true
			}
		}
	}
	return "", false
}

func plural(n int) string {
	if n == 1 {
		return "s"
	}
	return ""
}

// memoryReadings is the range of per-GPU figures a source may print as
// "GB" for hw's memory. Figures labelled GB mix units: the datasheets'
// "GB" is often the binary amount (an H200's "141 GB" is the 143771 MiB =
// 140.4 GiB nvidia-smi reports, 150.8 decimal GB), so the taxonomy's
// per-GPU vram_gb is consistent when it lies between the device's memory
// counted in GiB and in decimal GB. The device's memory is what the driver
// reports where the catalog has it, else the datasheet figure, whose own
// "GB" may be either unit.
func memoryReadings(hw schema.Hardware) (lo, hi float64, from string) {
	const gib = 1 << 30
	if r := hw.Reported; r != nil {
		return r.GiB, r.GB, fmt.Sprintf("%g %s as its driver reports (%.1f GiB, %.1f GB)", r.Amount, r.Unit, r.GiB, r.GB)
	}
	m := hw.Memory
	lo, hi = m.GiB, m.GB
	if m.Unit == "GB" {
		hi = m.Amount * gib / 1e9
	}
	return lo, hi, fmt.Sprintf("%g %s on its datasheet", m.Amount, m.Unit)
}

// brands lists the brands of the taxonomy's hardware profiles.
func (v *vetter) brands() []string {
	var out []string
	for _, p := range v.s.Profiles {
		if !contains(out, p.Brand) {
			out = append(out, p.Brand)
		}
	}
	sort.Strings(out)
	return out
}

// hardwareStatus reports a meta.hardware value outside the documented
// `verified | unsupported`. The site reads only those two: any other value
// shows no badge and leaves the GPU assumed to work
// (command-synthesis.js isHardwareSupported: `!== "unsupported"`), as if
// the entry were absent, except that any entry at all declares the GPU, and
// a restricted profile (DGX Spark and Station, RTX Pro, TPU, Xeon, Arc Pro)
// is in the picker only when declared (CommandBuilder.jsx hwByBrand:
// `if (p.restricted && !(id in declared)) continue;`).
func (v *vetter) hardwareStatus(id, status string, at node) {
	vocab := strings.Join(v.s.Schema.Vocabulary.HardwareStatus, ", ")
	if p := v.s.Profiles[id]; p != nil && p.Restricted {
		v.add(KindHardwareStatus, diag.Warning, at, "meta.hardware."+id,
			"%q is not one of %s: it shows no badge, but as any value it declares the restricted profile %s, which the site lists only for recipes that declare it; keep the entry (removing it would hide %s) and write verified once the recipe is tested there", status, vocab, id, id)
		return
	}
	v.add(KindHardwareStatus, diag.Warning, at, "meta.hardware."+id,
		"%q is not one of %s: the site shows no badge and treats %s as assumed to work, the same as no entry; write verified if the recipe is tested there, else remove the entry", status, vocab, id)
}
