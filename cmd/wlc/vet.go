package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wlcdev/wlc/internal/diag"
)

type vetOptions struct {
	format  string
	strict  bool
	recipes string
}

func newVetCmd(e *env) *cobra.Command {
	o := &vetOptions{}
	cmd := &cobra.Command{
		Use:   "vet [dir]",
		Short: "Check workloads against the schema, the hardware catalog and each other",
		Long: `vet loads the workloads package in dir (default workloads/) and reports
every error and warning at once, each with file:line:col, what is wrong and
what would fix it. Every vllm serve and vllm bench serve option is checked
against the flag catalog of the vLLM release the workload's image runs
(VLLM_IMAGE and VLLM_COMMIT count, as in export); an image without a
catalog of its own is checked against the one settings.vllm_flags maps
it to, else the newest, and each finding names the catalog that stood in.
It exits 1 when any error is found (or any warning with --strict), 0
otherwise.`,
		Example: `  wlc vet workloads/
  wlc vet --format json workloads/ > findings.json
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
	return cmd
}

func runVet(e *env, o *vetOptions, args []string) error {
	if o.format != "text" && o.format != "json" {
		return usagef("--format must be text or json, not %q", o.format)
	}
	if o.recipes != "" && len(args) == 0 {
		return runVetRecipes(e, o)
	}
	dir := e.dirArg(args, 0)
	lo := e.loadOptions(o.recipes)
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
