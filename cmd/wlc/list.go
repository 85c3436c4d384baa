package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/wlcdev/wlc/internal/load"
	"github.com/wlcdev/wlc/schema"
)

func newListCmd(e *env) *cobra.Command {
	var nightly bool
	var recipesDir, profile, format string
	cmd := &cobra.Command{
		Use:   "list [dir]",
		Short: "List workloads with their fleet, shape, precision and job hash",
		Example: `  wlc list
  wlc list --nightly workloads/
  wlc list --profile MI355X
  wlc list --format json | jq -r '.[] | select(.gpus >= 8) | .name'`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" {
				return usagef("--format must be text or json, not %q", format)
			}
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
			rows := make([]listRow, len(ws))
			for i, w := range ws {
				rows[i] = newListRow(w, r.Profiles[w.Profile], hashes[i])
			}
			if format == "json" {
				return writeJSON(e.stdout, rows)
			}
			return writeListText(e.stdout, rows)
		},
	}
	cmd.Flags().BoolVar(&nightly, "nightly", false, "only nightly workloads")
	cmd.Flags().StringVar(&profile, "profile", "", "only the workloads of this profile")
	cmd.Flags().StringVar(&format, "format", "text", "output format: text (a table) or json (an array of objects, for scripts)")
	cmd.ValidArgsFunction = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return nil, cobra.ShellCompDirectiveFilterDirs
	}
	cmd.RegisterFlagCompletionFunc("profile", func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return e.names(e.dirArg(args, 0), true, toComplete), cobra.ShellCompDirectiveNoFileComp
	})
	cmd.Flags().StringVar(&recipesDir, "recipes", "", recipesFlagUsage)
	return cmd
}

// listRow is one workload as wlc list shows it; a field the schema has
// keeps the schema's name in JSON.
type listRow struct {
	Name        string `json:"name"`
	Profile     string `json:"profile"`
	Hardware    string `json:"hardware"`
	Runtime     string `json:"runtime"`
	Nodes       int    `json:"nodes"`
	GPUsPerNode int    `json:"gpus_per_node"`
	// GPUs are the GPUs the job reserves: nodes × gpus_per_node.
	GPUs int `json:"gpus"`
	listShape
	// Disagg are the prefill and decode instances' shapes of a
	// disaggregated workload (the shape above is then the options every
	// instance shares: parallel sizes 1).
	Disagg    *listDisagg `json:"disagg,omitempty"`
	Precision string      `json:"precision"`
	Nightly   bool        `json:"nightly"`
	JobHash   string      `json:"job_hash"`
	// File and Line are where the workload is defined (File relative to
	// the module root).
	File string `json:"file"`
	Line int    `json:"line"`
}

type listDisagg struct {
	Prefill listShape `json:"prefill"`
	Decode  listShape `json:"decode"`
}

type listShape struct {
	TP             int  `json:"tensor_parallel_size"`
	DP             int  `json:"data_parallel_size"`
	PP             int  `json:"pipeline_parallel_size"`
	ExpertParallel bool `json:"enable_expert_parallel"`
}

func shapeOf(s schema.Serve) listShape {
	return listShape{s.TensorParallelSize, s.DataParallelSize, s.PipelineParallelSize, s.EnableExpertParallel}
}

func newListRow(w load.Workload, p schema.Profile, hash string) listRow {
	row := listRow{
		Name: w.Name, Profile: w.Profile, Hardware: p.Hardware, Runtime: p.Runtime,
		Nodes: w.Nodes, GPUsPerNode: w.GPUsPerNode, GPUs: w.Nodes * w.GPUsPerNode,
		listShape: shapeOf(w.Serve), Precision: w.Precision, Nightly: w.Nightly, JobHash: hash,
		File: w.File, Line: w.Line,
	}
	if d := w.Disagg; d != nil {
		row.Disagg = &listDisagg{shapeOf(d.Prefill.Serve), shapeOf(d.Decode.Serve)}
	}
	return row
}

// writeListText is the table: a disaggregated workload's sizes are
// prefill/decode.
func writeListText(out io.Writer, rows []listRow) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPROFILE\tHARDWARE\tRUNTIME\tNODESxGPUS\tTP\tDP\tPP\tEP\tPRECISION\tNIGHTLY\tHASH")
	for _, r := range rows {
		ep := "-"
		if r.ExpertParallel {
			ep = "yes"
		}
		tp, dp, pp := fmt.Sprint(r.TP), fmt.Sprint(r.DP), fmt.Sprint(r.PP)
		if d := r.Disagg; d != nil {
			tp = fmt.Sprintf("%d/%d", d.Prefill.TP, d.Decode.TP)
			dp = fmt.Sprintf("%d/%d", d.Prefill.DP, d.Decode.DP)
			pp = "-"
			if d.Prefill.ExpertParallel || d.Decode.ExpertParallel {
				ep = "yes"
			}
		}
		nightly := "-"
		if r.Nightly {
			nightly = "true"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%dx%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, r.Profile, r.Hardware, r.Runtime,
			r.Nodes, r.GPUsPerNode, tp, dp, pp, ep, r.Precision, nightly, r.JobHash)
	}
	return tw.Flush()
}
