package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"cuelang.org/go/cue/cuecontext"
	"github.com/spf13/cobra"

	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/internal/load"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/recipes"
)

// defaultRecipesDir is tried, relative to the working directory, when
// nothing names the recipes checkout (recipes are data outside the
// repository).
const defaultRecipesDir = "recipes"

// recipesSource resolves --recipes, then $WLC_RECIPES; "" when neither
// is given.
func (e *env) recipesSource(flag string) (dir, from string) {
	if flag != "" {
		return flag, "--recipes"
	}
	if d := e.getenv("WLC_RECIPES"); d != "" {
		return d, "$WLC_RECIPES"
	}
	return "", ""
}

// defaultRecipes is ./recipes when it holds a recipes checkout.
func (e *env) defaultRecipes() string {
	p := filepath.Join(e.cwd, defaultRecipesDir)
	if _, err := os.Stat(filepath.Join(p, "taxonomy.yaml")); err == nil {
		return p
	}
	return ""
}

// recipesDir is the recipes checkout wlc recipe reads: --recipes,
// $WLC_RECIPES, the settings.recipes of the workloads package in
// workloads/, else ./recipes; from names which.
func (e *env) recipesDir(flag string) (dir, from string, err error) {
	if dir, from := e.recipesSource(flag); dir != "" {
		return dir, from, nil
	}
	if wd := e.workloadsDir(); isDir(filepath.Join(e.cwd, wd)) {
		if e.ctx == nil {
			e.ctx = cuecontext.New()
		}
		r := load.ReadSettings(e.ctx, wd, e.cwd)
		if r.Settings != nil && r.Settings.Recipes != "" {
			dir := filepath.FromSlash(r.Settings.Recipes)
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(e.cwd, wd, dir)
			}
			return dir, "settings.recipes in " + filepath.ToSlash(wd) + "/", nil
		}
	}
	if d := e.defaultRecipes(); d != "" {
		return d, load.RecipesDefault, nil
	}
	return "", "", usagef("no recipes directory: pass --recipes DIR (a github.com/vllm-project/recipes checkout: taxonomy.yaml, strategies/, models/), set WLC_RECIPES, or set settings.recipes in the workloads package (%s/); looked in %s", defaultWorkloadsDir, filepath.Join(e.cwd, defaultRecipesDir))
}

// loadOptions are the load options every command that loads workloads
// shares: the recipes checkout (--recipes, $WLC_RECIPES, the package's
// settings.recipes, ./recipes; the loader names which when it fails) and
// the export-time image overrides, which decide each workload's flag
// catalog.
func (e *env) loadOptions(recipesFlag string) load.Options {
	o := load.Options{Overrides: plan.OverridesFromEnv(e.getenv)}
	o.RecipesDir, o.RecipesFrom = e.recipesSource(recipesFlag)
	if o.RecipesDir == "" {
		if d := e.defaultRecipes(); d != "" {
			o.RecipesDir, o.RecipesFrom = d, load.RecipesDefault
		}
	}
	return o
}

const recipesFlagUsage = "vLLM recipes checkout that workloads with a recipe derive from (default $WLC_RECIPES, the package's settings.recipes, else ./recipes)"

// loadRecipes reads the recipes checkout dir; from names where dir came
// from, for the error.
func (e *env) loadRecipes(dir, from string) (*recipes.Set, error) {
	if e.ctx == nil {
		e.ctx = cuecontext.New()
	}
	s, err := recipes.Load(e.ctx, dir, e.cwd)
	if err != nil {
		if from != "" && from != "--recipes" {
			return nil, usagef("the recipes directory from %s: %v", from, err)
		}
		return nil, usagef("%v", err)
	}
	return s, nil
}

type recipeOptions struct {
	recipes, hardware, variant, strategy string
	nodes                                int
	features, noFeatures                 []string
	canonical                            bool
	format                               string
}

func newRecipeCmd(e *env) *cobra.Command {
	o := &recipeOptions{}
	cmd := &cobra.Command{
		Use:   "recipe MODEL --hardware ID",
		Short: "Print the vllm serve command a vLLM recipe resolves to",
		Long: `recipe resolves one rendering of an upstream vLLM recipe (recipes.vllm.ai)
the way the recipes site composes it: base args, variant, strategy and its
computed parallel sizes, strategy overrides, hardware overrides, then the
default features, last value wins per flag. Unlike the site, flags are
compared by their canonical spelling (--max_num_seqs ≡ --max-num-seqs,
--x=y ≡ --x y, -tp ≡ --tensor-parallel-size) and every value that loses is
reported on stderr instead of dropped silently. MODEL is the recipe's
<org>/<repo>; --hardware is a taxonomy id (b200, gb200, mi355x, ...).`,
		Example: `  wlc recipe Qwen/Qwen3.5-397B-A17B --hardware b200 --variant nvfp4 --strategy single_node_tep
  wlc recipe deepseek-ai/DeepSeek-V4-Pro --hardware b200 --strategy multi_node_dep --nodes 2
  wlc recipe openai/gpt-oss-120b --hardware h200 --feature spec_decoding --recipes ~/src/recipes`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRecipe(e, o, args[0])
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.recipes, "recipes", "", "recipes checkout (default $WLC_RECIPES, settings.recipes of workloads/, else ./recipes)")
	f.StringVar(&o.hardware, "hardware", "", "taxonomy hardware id, e.g. b200 (required)")
	f.StringVar(&o.variant, "variant", "", "variant key (default: default)")
	f.StringVar(&o.strategy, "strategy", "", "strategy id (default: the site's recommendation)")
	f.IntVar(&o.nodes, "nodes", 0, "node count (default 1, or 2+ for multi-node strategies)")
	f.StringArrayVar(&o.features, "feature", nil, "turn a feature on (name or name=mode); repeatable")
	f.StringArrayVar(&o.noFeatures, "no-feature", nil, "turn a default feature off; repeatable")
	f.BoolVar(&o.canonical, "canonical", false, "print flags in canonical spelling (--max-num-seqs N) instead of as written")
	f.StringVar(&o.format, "format", "text", "output format: text (a bash script) or json")
	return cmd
}

func runRecipe(e *env, o *recipeOptions, model string) error {
	if o.hardware == "" {
		return usagef("--hardware is required (a taxonomy id such as b200, h200, gb200, mi355x)")
	}
	if o.format != "text" && o.format != "json" {
		return usagef("--format must be text or json, not %q", o.format)
	}
	if o.nodes < 0 {
		return usagef("--nodes must be positive")
	}
	dir, from, err := e.recipesDir(o.recipes)
	if err != nil {
		return err
	}
	s, err := e.loadRecipes(dir, from)
	if err != nil {
		return err
	}
	c := recipes.Compose(s, recipes.Request{
		Recipe: model, Hardware: o.hardware, Variant: o.variant, Strategy: o.strategy, Nodes: o.nodes,
		Features: o.features, NoFeatures: o.noFeatures,
	})
	diags := c.Findings.Diags()
	if s.Find(model) == nil {
		// The file may be there but not load: say why before "no recipe".
		var why diag.List
		for _, d := range s.Diags {
			if d.Severity == diag.Error && strings.HasSuffix(d.File, "models/"+model+".yaml") {
				why = append(why, d)
			}
		}
		diags = append(why, diags...)
	}
	diags.WriteText(e.stderr)
	if diags.HasErrors() {
		return errReported
	}
	if o.format == "json" {
		return writeRecipeJSON(e, c, o.canonical)
	}
	fmt.Fprint(e.stdout, c.Script(o.canonical))
	return nil
}

func writeRecipeJSON(e *env, c *recipes.Command, canonical bool) error {
	type node struct {
		Rank int      `json:"rank"`
		Argv []string `json:"argv"`
	}
	out := struct {
		Recipe    string            `json:"recipe"`
		Variant   string            `json:"variant"`
		Strategy  string            `json:"strategy"`
		Hardware  string            `json:"hardware"`
		Nodes     int               `json:"nodes"`
		Model     string            `json:"model"`
		Image     string            `json:"image"`
		ImageFrom string            `json:"image_from"`
		MinVLLM   string            `json:"min_vllm_version,omitempty"`
		Nightly   bool              `json:"nightly_required"`
		Env       map[string]string `json:"env"`
		Commands  []node            `json:"commands"`
		Findings  diag.List         `json:"findings"`
	}{c.Recipe, c.Variant, c.Strategy, c.Hardware, c.Nodes, c.Model, c.Image.Ref, c.Image.From, c.Image.MinVLLM, c.Image.Nightly, c.EnvMap(), nil, c.Findings.Diags()}
	if out.Findings == nil {
		out.Findings = diag.List{}
	}
	for rank := range c.Args {
		out.Commands = append(out.Commands, node{rank, append([]string{"vllm", "serve"}, c.Argv(rank, canonical)...)})
	}
	return writeJSON(e.stdout, out)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// runVetRecipes is `wlc vet --recipes DIR`.
func runVetRecipes(e *env, o *vetOptions) error {
	s, err := e.loadRecipes(o.recipes, "--recipes")
	if err != nil {
		return err
	}
	return e.reportVet(o, recipes.Vet(s).Diags(), fmt.Sprintf(" in %d recipe(s)", len(s.Recipes)), fmt.Sprintf("%d recipe(s)", len(s.Recipes)))
}
