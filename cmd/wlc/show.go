package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/wlcdev/wlc/internal/load"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/plan/selection"
)

func newShowCmd(e *env) *cobra.Command {
	var format, recipesDir string
	cmd := &cobra.Command{
		Use:   "show NAME [dir]",
		Short: "Print a workload fully resolved: image, env, and every argv",
		Long: `show prints the resolved, backend-neutral form of one workload: the image
chosen (and why), the merged environment, the exact vllm serve argv, every
vllm bench serve run after sweep expansion, the lm_eval and bfcl commands,
and how the hardware runs the checkpoint precision (native or fallback).
A workload derived from a vLLM recipe shows the rendering it came from
(recipe, variant, strategy, hardware id) under recipe. job_hash, first, is
the job's identity: a hash of everything that changes what runs and of
nothing that does not (the name, the file, comments, formatting), which
wlc list, wlc diff, the exported scripts (WLC_JOB_HASH) and the results
carry.
VLLM_IMAGE, VLLM_COMMIT and VLLM_IMAGE_<PLATFORM> are honoured as in export.`,
		Example: `  wlc show qwen3_5_b200
  VLLM_COMMIT=0123456789abcdef wlc show --format json gpt_oss_120b_h200`,
		Args:              cobra.RangeArgs(1, 2),
		ValidArgsFunction: e.completeNames(0, 1, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "yaml" && format != "json" {
				return usagef("--format must be yaml or json, not %q", format)
			}
			r, _ := e.loadWorkloads(e.dirArg(args, 1), e.loadOptions(recipesDir))
			if err := e.requireClean(r); err != nil {
				return err
			}
			var cands []selection.Candidate
			for _, w := range r.Workloads {
				cands = append(cands, selection.Candidate{Name: w.Name, File: w.File, Nightly: w.Nightly})
			}
			names, err := selection.Pick(cands, e.selectionEntries(r, []string{args[0]}))
			if err != nil {
				return commandError{"wlc show", err}
			}
			w, _ := r.Workload(names[0])
			ps, err := e.resolve(r, []load.Workload{w})
			if err != nil {
				return err
			}
			hash, err := plan.JobHash(ps[0])
			if err != nil {
				return commandError{"wlc show", err}
			}
			// The hash leads: what the rest describes, named.
			data, err := json.MarshalIndent(struct {
				JobHash string `json:"job_hash"`
				plan.Workload
			}{hash, ps[0]}, "", "  ")
			if err != nil {
				return err
			}
			if format == "json" {
				_, err = fmt.Fprintf(e.stdout, "%s\n", data)
				return err
			}
			return writeYAML(e, data)
		},
	}
	cmd.Flags().StringVar(&format, "format", "yaml", "output format: yaml or json")
	cmd.Flags().StringVar(&recipesDir, "recipes", "", recipesFlagUsage)
	return cmd
}

// writeYAML re-encodes JSON as block YAML, keeping the key order.
func writeYAML(e *env, jsonData []byte) error {
	var n yaml.Node
	if err := yaml.Unmarshal(jsonData, &n); err != nil {
		return err
	}
	clearStyle(&n)
	enc := yaml.NewEncoder(e.stdout)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return err
	}
	return enc.Close()
}

func clearStyle(n *yaml.Node) {
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		n.Style = 0
	}
	if n.Kind == yaml.ScalarNode && n.Style == yaml.DoubleQuotedStyle {
		n.Style = 0
	}
	for _, c := range n.Content {
		clearStyle(c)
	}
}
