package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/internal/load"
	"github.com/wlcdev/wlc/internal/vllmflags"
)

type vetOptions struct {
	format    string
	strict    bool
	vllmFlags string
	recipes   string
}

func newVetCmd(e *env) *cobra.Command {
	o := &vetOptions{}
	cmd := &cobra.Command{
		Use:   "vet [dir]",
		Short: "Check workloads against the schema, the hardware catalog and each other",
		Long: `vet loads the workloads package in dir (default workloads/) and reports
every error and warning at once, each with file:line:col, what is wrong and
what would fix it. It exits 1 when any error is found (or any warning with
--strict), 0 otherwise.`,
		Example: `  wlc vet workloads/
  wlc vet --format json workloads/ > findings.json
  wlc vet --vllm-flags vllm-flags/v0.13.0.json workloads/
  wlc vet --strict
  wlc vet --recipes ~/src/recipes workloads/`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runVet(e, o, args)
		},
	}
	cmd.Flags().StringVar(&o.format, "format", "text", "output format: text or json")
	cmd.Flags().BoolVar(&o.strict, "strict", false, "treat warnings as errors")
	cmd.Flags().StringVar(&o.recipes, "recipes", "", "vLLM recipes checkout (taxonomy.yaml, strategies/, models/): alone, vet it; with a workloads dir, the recipes its workloads derive from (default $WLC_RECIPES)")
	cmd.Flags().StringVar(&o.vllmFlags, "vllm-flags", "", "check every serve and bench flag against a vLLM flag catalog (a JSON file), or a directory of them: a workload pinning a release image is checked against that release, the others against the newest")
	return cmd
}

func runVet(e *env, o *vetOptions, args []string) error {
	if o.format != "text" && o.format != "json" {
		return usagef("--format must be text or json, not %q", o.format)
	}
	if o.recipes != "" && len(args) == 0 {
		return runVetRecipes(e, o)
	}
	dir := defaultWorkloadsDir
	if len(args) == 1 {
		dir = args[0]
	}
	lo := load.Options{RecipesDir: e.workloadRecipes(o.recipes)}
	if o.vllmFlags != "" {
		cat, err := vllmflags.LoadPath(o.vllmFlags)
		if err != nil {
			return usagef("--vllm-flags: %v", err)
		}
		lo.VLLMFlags = cat
	}
	r, _ := e.loadWorkloads(dir, lo)
	return e.reportVet(o, r.Diags, "", fmt.Sprintf("%d workload(s)", len(r.Workloads)))
}

// reportVet prints findings as --format asks and sets the exit status:
// errors (or warnings under --strict) fail. scope qualifies the error
// summary ("in 3 recipe(s)"); checked names what passed ("29 workload(s)").
func (e *env) reportVet(o *vetOptions, diags diag.List, scope, checked string) error {
	if o.strict {
		diags = diags.Promote()
	}
	if o.format == "json" {
		if err := diags.WriteJSON(e.stdout); err != nil {
			return err
		}
	} else {
		diags.WriteText(e.stderr)
	}
	if diags.HasErrors() {
		if o.format == "text" {
			fmt.Fprintf(e.stderr, "wlc vet: %d error(s), %d warning(s)%s\n", diags.Count(diag.Error), diags.Count(diag.Warning), scope)
		}
		return errReported
	}
	if o.format == "text" {
		fmt.Fprintf(e.stdout, "%s ok", checked)
		if n := diags.Count(diag.Warning); n > 0 {
			fmt.Fprintf(e.stdout, ", %d warning(s)", n)
		}
		fmt.Fprintln(e.stdout)
	}
	return nil
}
