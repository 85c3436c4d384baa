package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"cuelang.org/go/cue/cuecontext"
	"github.com/spf13/cobra"

	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/internal/recipes"
)

// defaultRecipesDirs are tried, relative to the working directory, when
// neither --recipes nor $WLC_RECIPES names the recipes checkout (recipes
// are data outside the repository).
var defaultRecipesDirs = []string{"recipes"}

// recipesDir resolves --recipes, then $WLC_RECIPES, then the defaults.
func (e *env) recipesDir(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if d := e.getenv("WLC_RECIPES"); d != "" {
		return d, nil
	}
	for _, d := range defaultRecipesDirs {
		p := filepath.Join(e.cwd, d)
		if _, err := os.Stat(filepath.Join(p, "taxonomy.yaml")); err == nil {
			return p, nil
		}
	}
	return "", usagef("no recipes directory: pass --recipes DIR (a github.com/vllm-project/recipes checkout: taxonomy.yaml, strategies/, models/) or set WLC_RECIPES; looked in %s", filepath.Join(e.cwd, defaultRecipesDirs[0]))
}

// workloadRecipes is the recipes checkout workloads with a `recipe`
// derive from: --recipes, $WLC_RECIPES or a default location; "" when
// there is none (the loader then names the flag to pass, and only if a
// workload needs it).
func (e *env) workloadRecipes(flag string) string {
	dir, err := e.recipesDir(flag)
	if err != nil {
		return ""
	}
	return dir
}

const recipesFlagUsage = "vLLM recipes checkout that workloads with a recipe derive from (default $WLC_RECIPES or ./recipes)"

func (e *env) loadRecipes(dir string) (*recipes.Set, error) {
	if e.ctx == nil {
		e.ctx = cuecontext.New()
	}
	s, err := recipes.Load(e.ctx, dir, e.cwd)
	if err != nil {
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
	f.StringVar(&o.recipes, "recipes", "", "recipes checkout (default $WLC_RECIPES or ./recipes)")
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
	dir, err := e.recipesDir(o.recipes)
	if err != nil {
		return err
	}
	s, err := e.loadRecipes(dir)
	if err != nil {
		return err
	}
	c := recipes.Compose(s, recipes.Request{
		Recipe: model, Hardware: o.hardware, Variant: o.variant, Strategy: o.strategy, Nodes: o.nodes,
		Features: o.features, NoFeatures: o.noFeatures,
	})
	diags := c.Findings.Diags()
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
		Recipe   string            `json:"recipe"`
		Variant  string            `json:"variant"`
		Strategy string            `json:"strategy"`
		Hardware string            `json:"hardware"`
		Nodes    int               `json:"nodes"`
		Model    string            `json:"model"`
		Env      map[string]string `json:"env"`
		Commands []node            `json:"commands"`
		Findings diag.List         `json:"findings"`
	}{c.Recipe, c.Variant, c.Strategy, c.Hardware, c.Nodes, c.Model, c.EnvMap(), nil, c.Findings.Diags()}
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
	s, err := e.loadRecipes(o.recipes)
	if err != nil {
		return err
	}
	return e.reportVet(o, recipes.Vet(s).Diags(), fmt.Sprintf(" in %d recipe(s)", len(s.Recipes)), fmt.Sprintf("%d recipe(s)", len(s.Recipes)))
}
