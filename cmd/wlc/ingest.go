package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/wlcdev/wlc/internal/results/dashboard"
	"github.com/wlcdev/wlc/internal/results/ingest"
)

func newIngestCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "ingest RESULTS_DIR",
		Short: "Send a finished run's rows to the perf and eval dashboards again",
		Long: `wlc ingest sends the rows a job kept under RESULTS_DIR/ingest/ to the
dashboards again (RESULTS_DIR is results/<run name>, the run name being
dashboard_name, else the workload key): the same bodies the job built
and sent, each validated against schema/ingest.cue first. It reads
INGEST_BEARER_TOKEN, PERF_INGEST_URL, INGEST_URL and INGEST_NO_SAMPLES
like the job. Exit 0 when every row was sent,
1 when any was not (one line each).`,
		Example: `  INGEST_BEARER_TOKEN=... wlc ingest results/qwen3_5-b200`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(e.cwd, dir)
			}
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				return fmt.Errorf("%s: not a results directory (want results/<run name> of a finished run)", args[0])
			}
			rows, err := ingest.KeptRows(dir)
			if err != nil {
				return err
			}
			if len(rows) == 0 {
				return fmt.Errorf("%s: no rows under %s/ (the job keeps each row it built there)", args[0], dashboard.Dir)
			}
			s := ingest.SenderFromEnv(e.getenv)
			if s.Token == "" {
				return fmt.Errorf("%s is empty: %d row(s) in %s not sent; set it to the dashboards' token", dashboard.TokenEnv, len(rows), args[0])
			}
			failed, sent := 0, 0
			rel := func(p string) string {
				if r, err := filepath.Rel(e.cwd, p); err == nil {
					return r
				}
				return p
			}
			for _, r := range rows {
				if r.Definition == ingest.EvalSamplesRow && s.NoSamples {
					continue
				}
				err := errors.New("not a results or samples row")
				if r.Definition != "" {
					err = ingest.Validate(r.Definition, r.Body)
				}
				if err == nil {
					err = s.Post(cmd.Context(), r.Perf, r.Body)
				}
				if err != nil {
					fmt.Fprintf(e.stderr, "%s: not sent: %v\n", rel(r.Path), err)
					failed++
					continue
				}
				sent++
			}
			fmt.Fprintf(e.stdout, "sent %d row(s) of %s\n", sent, args[0])
			if failed > 0 {
				return failf("wlc", "%d row(s) not sent", failed)
			}
			return nil
		},
	}
}
