package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/wlcdev/wlc/internal/load"
)

func newListCmd(e *env) *cobra.Command {
	var nightly bool
	var recipesDir, profile string
	cmd := &cobra.Command{
		Use:   "list [dir]",
		Short: "List workloads with their fleet, shape, precision and job hash",
		Example: `  wlc list
  wlc list --nightly workloads/
  wlc list --profile MI355X`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, _ := e.loadWorkloads(e.dirArg(args, 0), e.loadOptions(recipesDir))
			if err := e.requireClean(r); err != nil {
				return err
			}
			if _, ok := r.Profiles[profile]; profile != "" && !ok {
				return usagef("--profile %s: no such profile; the package defines %s", profile, strings.Join(e.names(e.dirArg(args, 0), true), ", "))
			}
			var ws []load.Workload
			for _, w := range r.Workloads {
				if nightly && !w.Nightly || profile != "" && w.Profile != profile {
					continue
				}
				ws = append(ws, w)
			}
			hashes, err := e.jobHashes(r, ws)
			if err != nil {
				return commandError{"wlc list", err}
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tPROFILE\tHARDWARE\tRUNTIME\tNODESxGPUS\tTP\tDP\tPP\tEP\tPRECISION\tNIGHTLY\tHASH")
			for i, w := range ws {
				p := r.Profiles[w.Profile]
				ep := "-"
				if w.Serve.EnableExpertParallel {
					ep = "yes"
				}
				tp, dp, pp := fmt.Sprint(w.Serve.TensorParallelSize), fmt.Sprint(w.Serve.DataParallelSize), fmt.Sprint(w.Serve.PipelineParallelSize)
				if d := w.Disagg; d != nil {
					// Disaggregated: prefill/decode instance sizes.
					tp = fmt.Sprintf("%d/%d", d.Prefill.Serve.TensorParallelSize, d.Decode.Serve.TensorParallelSize)
					dp = fmt.Sprintf("%d/%d", d.Prefill.Serve.DataParallelSize, d.Decode.Serve.DataParallelSize)
					pp = "-"
					if d.Prefill.Serve.EnableExpertParallel || d.Decode.Serve.EnableExpertParallel {
						ep = "yes"
					}
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%dx%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", w.Name, w.Profile, p.Hardware, p.Runtime,
					w.Nodes, w.GPUsPerNode, tp, dp, pp,
					ep, w.Precision, strings.Replace(fmt.Sprint(w.Nightly), "false", "-", 1), hashes[i])
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&nightly, "nightly", false, "only nightly workloads")
	cmd.Flags().StringVar(&profile, "profile", "", "only the workloads of this profile")
	cmd.ValidArgsFunction = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return nil, cobra.ShellCompDirectiveFilterDirs
	}
	cmd.RegisterFlagCompletionFunc("profile", func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return e.names(e.dirArg(args, 0), true, toComplete), cobra.ShellCompDirectiveNoFileComp
	})
	cmd.Flags().StringVar(&recipesDir, "recipes", "", recipesFlagUsage)
	return cmd
}
