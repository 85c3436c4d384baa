// Package recipes reads the upstream vLLM recipes (github.com/vllm-project/
// recipes: taxonomy.yaml, strategies/*.yaml, models/<org>/<repo>.yaml) as
// they are, validates them against wlc's CUE schema (schema/recipe.cue)
// with file:line:col positions, checks the rules the upstream build never
// enforces (Vet), and composes the `vllm serve` command the recipes site
// would render, with flag spellings normalized and conflicts reported
// (Compose).
package recipes

import (
	"fmt"
	"io/fs"
	"sort"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/parser"

	"github.com/wlcdev/wlc/schema"
)

// Schema is wlc's compiled schema package, with the recipe definitions and
// tables decoded for the checks.
type Schema struct {
	Recipe, Strategy, Taxonomy cue.Value
	// HardwareMap maps a recipe hardware id to a wlc catalog name or "none".
	HardwareMap map[string]string
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
	DependencyBrands  []string   `json:"dependency_brands"`
	ExclusiveFeatures [][]string `json:"exclusive_features"`
}

// CompileSchema builds the embedded schema package in ctx.
func CompileSchema(ctx *cue.Context) (*Schema, error) {
	inst := build.NewContext().NewInstance("", nil)
	inst.ImportPath = schema.ImportPath
	inst.PkgName = "schema"
	var names []string
	if err := fs.WalkDir(schema.Files, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, p)
		}
		return err
	}); err != nil {
		return nil, err
	}
	sort.Strings(names)
	for _, n := range names {
		src, err := schema.Files.ReadFile(n)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile("schema/"+n, src, parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("embedded schema: %w", err)
		}
		if err := inst.AddSyntax(f); err != nil {
			return nil, fmt.Errorf("embedded schema: %w", err)
		}
	}
	// The package as a whole is not concrete (definitions with pending
	// checks); only the values read below must be sound.
	return SchemaFrom(ctx.BuildInstance(inst))
}

// SchemaFrom reads the recipe definitions and tables from an already built
// schema package, so a run that loaded it for workloads builds it once.
func SchemaFrom(v cue.Value) (*Schema, error) {
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
		path string
		dst  any
	}{
		{"recipe_hardware", &s.HardwareMap},
		{"recipe_precisions", &s.Precisions},
		{"recipe_vocabulary", &s.Vocabulary},
		{"hardware", &s.Hardware},
		{"architectures", &s.Architectures},
	} {
		if err := v.LookupPath(cue.ParsePath(d.path)).Decode(d.dst); err != nil {
			return nil, fmt.Errorf("embedded schema: %s: %w", d.path, err)
		}
	}
	return s, nil
}
