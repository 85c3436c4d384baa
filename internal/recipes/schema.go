// Package recipes reads the upstream vLLM recipes (github.com/vllm-project/
// recipes: taxonomy.yaml, strategies/*.yaml, models/<org>/<repo>.yaml) as
// they are, validates them against wlc's CUE schema (schema/recipe/recipe.cue)
// with file:line:col positions, checks the rules the upstream build never
// enforces (Vet), and composes the `vllm serve` command the recipes site
// would render, with flag spellings normalized and conflicts reported
// (Compose).
package recipes

import (
	"fmt"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/build"

	"github.com/wlcdev/wlc/schema"
	"github.com/wlcdev/wlc/schema/recipe"
)

// Schema is wlc's compiled schema package, with the recipe definitions and
// tables decoded for the checks.
type Schema struct {
	Recipe, Strategy, Taxonomy cue.Value
	// HardwareMap maps a recipe hardware id to a wlc catalog name or "none".
	HardwareMap map[string]string
	// RecipeArchitectures maps recipe hardware ids the catalog does not
	// list to the architecture whose kernel table they use.
	RecipeArchitectures map[string]string
	// Precisions maps a recipe precision to wlc's #Precision.
	Precisions    map[string]PrecisionInfo
	Vocabulary    Vocabulary
	Hardware      map[string]schema.Hardware
	Architectures map[string]schema.ArchitectureFacts
}

// PrecisionInfo mirrors one entry of recipe_precisions.
type PrecisionInfo struct {
	WLC          string `json:"wlc"`
	Documented   bool   `json:"documented"`
	UpstreamGate *struct {
		Brand      string `json:"brand"`
		Generation string `json:"generation"`
	} `json:"upstream_gate"`
}

// Vocabulary mirrors recipe_vocabulary.
type Vocabulary struct {
	Difficulty        []string   `json:"difficulty"`
	HardwareStatus    []string   `json:"hardware_status"`
	ExclusiveFeatures [][]string `json:"exclusive_features"`
}

// CompileSchema builds the embedded recipe package (schema/recipe) and
// the workload schema it imports in ctx.
func CompileSchema(ctx *cue.Context) (*Schema, error) {
	sch, err := schema.Instance()
	if err != nil {
		return nil, err
	}
	rec, err := schema.EmbeddedInstance(recipe.Files, recipe.ImportPath, "recipe", "schema/recipe/")
	if err != nil {
		return nil, err
	}
	rec.Imports = []*build.Instance{sch}
	// The packages as a whole are not concrete (definitions with pending
	// checks); only the values read below must be sound.
	vals, err := ctx.BuildInstances([]*build.Instance{rec, sch})
	if err != nil {
		return nil, fmt.Errorf("embedded schema: %w", err)
	}
	return SchemaFrom(vals[0], vals[1])
}

// SchemaFrom reads the recipe definitions and tables from the built recipe
// package and the catalog from the workload schema package, so a run that
// loaded the workload schema builds it once.
func SchemaFrom(v, sch cue.Value) (*Schema, error) {
	s := &Schema{
		Recipe:   v.LookupPath(cue.ParsePath("#Recipe")),
		Strategy: v.LookupPath(cue.ParsePath("#Strategy")),
		Taxonomy: v.LookupPath(cue.ParsePath("#Taxonomy")),
	}
	for _, d := range []cue.Value{s.Recipe, s.Strategy, s.Taxonomy} {
		if !d.Exists() {
			return nil, fmt.Errorf("embedded schema: missing recipe definitions: %v", d.Err())
		}
	}
	for _, d := range []struct {
		from cue.Value
		path string
		dst  any
	}{
		{v, "recipe_hardware", &s.HardwareMap},
		{v, "recipe_architectures", &s.RecipeArchitectures},
		{v, "recipe_precisions", &s.Precisions},
		{v, "recipe_vocabulary", &s.Vocabulary},
		{sch, "hardware", &s.Hardware},
		{sch, "architectures", &s.Architectures},
	} {
		if err := d.from.LookupPath(cue.ParsePath(d.path)).Decode(d.dst); err != nil {
			return nil, fmt.Errorf("embedded schema: %s: %w", d.path, err)
		}
	}
	return s, nil
}

// Architecture is the kernel table p runs: its catalog hardware's
// architecture, else recipe_architectures' entry for it; name is the
// catalog name, or p's id when only the architecture is known.
func (s *Schema) Architecture(p *Profile) (arch, name string, ok bool) {
	if hw, found := s.Hardware[s.HardwareMap[p.ID]]; found {
		return hw.Architecture, s.HardwareMap[p.ID], true
	}
	if a, found := s.RecipeArchitectures[p.ID]; found {
		return a, p.ID, true
	}
	return "", "", false
}
