package runner

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"
)

// Exit is a job script's exit status with a meaning of its own.
type Exit struct {
	Status int
	// Var is the shell variable holding an infrastructure Status in the
	// scripts.
	Var string
	// Infra: the infrastructure failed, not the workload; the pipeline
	// retries the job (Buildkite's automatic retry).
	Infra bool
	Means string
}

// Exits are the statuses the scripts give a meaning. Any other non-zero
// status is the first failed step's own: a workload failure.
var Exits = []Exit{
	{InvalidResults, "", false, "results that are not true: failed requests, no output tokens, a metric the dashboards need missing, an eval whose every request failed"},
	{90, "WLC_EXIT_PULL", true, "the image could not be pulled"},
	{91, "WLC_EXIT_GPU", true, "a GPU or the node is unavailable (the container runtime, the driver or Slurm says so)"},
	{92, "WLC_EXIT_OOM", true, "out of memory while the server loaded"},
	{93, "WLC_EXIT_COMM", true, "an NCCL (RCCL, Gloo) communication error"},
	{94, "WLC_EXIT_KILLED", true, "the system killed the server (SIGKILL: the OOM killer, a node drained)"},
	{95, "WLC_EXIT_PORT", true, "another server listens on the job's port beside its own (the results would mix)"},
}

// InvalidResults is the status of a step whose results are not true
// (EX_DATAERR); results.py and bfcl.py exit with it.
const InvalidResults = 65

// InfraStatuses are the statuses of infrastructure failures, ascending.
func InfraStatuses() []int {
	var out []int
	for _, e := range Exits {
		if e.Infra {
			out = append(out, e.Status)
		}
	}
	return out
}

// exitSummary is the header's line on exit statuses (Exits, said once).
func exitSummary() string {
	infra := InfraStatuses()
	return fmt.Sprintf("Exit status: 0 when every step passed; %d-%d an infrastructure failure (a Buildkite step\nretries, a Slurm job requeues); any other is the workload's, never retried: the first\nfailed step's own (%d: results that are not true). The exit classes (outcome.sh) list them.",
		infra[0], infra[len(infra)-1], InvalidResults)
}

//go:embed outcome.sh
var outcomeSh string

// exitsShell is Exits as shell variables, then WLC_EXIT_INFRA (the
// infrastructure statuses), then outcome.sh's functions.
func exitsShell() string {
	var b strings.Builder
	b.WriteString("\n# Exit statuses with a meaning (backends/runner/exits.go); see outcome.sh below.\n")
	var infra []string
	for _, e := range Exits {
		if !e.Infra {
			// Set by the step itself (results.py, bfcl.py): said only.
			fmt.Fprintf(&b, "# %d: workload: %s\n", e.Status, Comment(e.Means))
			continue
		}
		n := strconv.Itoa(e.Status)
		infra = append(infra, n)
		fmt.Fprintf(&b, "%s=%s # infrastructure: %s\n", e.Var, n, Comment(e.Means))
	}
	b.WriteString("WLC_EXIT_INFRA=(" + strings.Join(infra, " ") + ")\n\n")
	b.WriteString(outcomeSh)
	return b.String()
}
