package runner

import (
	_ "embed"
	"fmt"
	"strings"

	"github.com/wlcdev/wlc/internal/plan"
)

// ServeExtra is what a runtime appends to the server's argv: the flags of
// the current backend of a sweep (lib.sh's WLC_SERVE_EXTRA), nothing for a
// workload without a sweep.
func ServeExtra(w plan.Workload) []string {
	if w.Sweep == nil {
		return nil
	}
	return []string{`"${WLC_SERVE_EXTRA[@]}"`}
}

// Serve is the server start and the steps: once, or once per backend of
// the workload's sweep (steps become the function wlc_steps, each run a
// wlc_sweep_run), then the sweep's summary.
func Serve(w plan.Workload, steps string) (string, error) {
	if w.Job != nil {
		return JobStep(*w.Job)
	}
	if w.Sweep == nil {
		return "wlc_server_start\n" + ToolsStart(w) + "wlc_wait_ready || exit $?\n" + steps, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n# Every step, run against each server of the %s backend sweep.\nwlc_steps() {\n", w.Sweep.Kind)
	body := strings.TrimLeft(steps, "\n")
	if strings.TrimSpace(body) == "" {
		body = ":\n"
	}
	for _, l := range strings.SplitAfter(body, "\n") {
		if strings.TrimSpace(l) != "" {
			b.WriteString("  ")
		}
		b.WriteString(l)
	}
	b.WriteString("}\n\n")
	fmt.Fprintf(&b, "# One server per %s backend, one after another, results in %s/<dir>/;\n", w.Sweep.Kind, Comment(w.ResultsPath))
	b.WriteString("# a backend whose server does not start is recorded and the next one runs.\n")
	b.WriteString("WLC_SWEEP_ROOT=$WLC_RESULTS_DIR\nWLC_SWEEP_BENCH=$WLC_BENCH_DIR\n")
	for _, r := range w.Sweep.Runs {
		ws, err := Words(append([]string{w.Sweep.Kind, r.Backend, r.Dir, "wlc_steps"}, r.Args...), NoVars)
		if err != nil {
			return "", err
		}
		b.WriteString("wlc_sweep_run " + strings.Join(ws, " ") + "\n")
	}
	b.WriteString("wlc_sweep_done\n")
	return b.String(), nil
}

// ToolsStart is wlc_tools_start, right after the server started, when w's
// steps need client tools.
func ToolsStart(w plan.Workload) string {
	if len(w.Tools) == 0 {
		return ""
	}
	return "wlc_tools_start\n"
}

// CustomStep renders one custom step: wlc_custom with the step's env and
// argv, placeholders read where the step runs.
func CustomStep(c plan.CustomRun) (string, error) {
	label, err := Quote("custom " + c.Name)
	if err != nil {
		return "", err
	}
	call, err := customCall(label, "wlc_custom", c)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("# custom step %s (on the %s)\n%s\n", Comment(c.Name), c.Where, call), nil
}

// JobStep renders a custom job, which runs instead of the server and
// every step: wlc_job with its env and argv, placeholders read where it
// runs.
func JobStep(c plan.CustomRun) (string, error) {
	where := "in the server's place, with every reserved GPU"
	if c.Where == "host" {
		where = "on the host running this script"
	}
	call, err := customCall("'custom job'", "wlc_job", c)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("\n# The custom job, %s; no server runs.\nWLC_SERVER_GONE=none\n%s", where, call) + "\n", nil
}

// customCall is `wlc_step LABEL FN WHERE DIR -- env K=V... ARGV...`,
// one word a line, placeholders read where c runs (the host, or where
// the server runs).
func customCall(label, fn string, c plan.CustomRun) (string, error) {
	vars := ServerVars
	if c.Where == "host" {
		vars = HostVars
	}
	head, err := Words([]string{c.Where, c.Dir}, NoVars)
	if err != nil {
		return "", err
	}
	lines := [][]string{{"wlc_step", label, fn, head[0], head[1], "--", "env"}}
	for _, e := range c.Env {
		a, err := Assign(e.Name, e.Value, vars)
		if err != nil {
			return "", err
		}
		lines = append(lines, []string{a})
	}
	argv, err := Words(c.Argv, vars)
	if err != nil {
		return "", err
	}
	for _, a := range argv {
		lines = append(lines, []string{a})
	}
	return Continued(lines, "  "), nil
}

//go:embed sweep.sh
var sweepLib string

//go:embed custom.sh
var customLib string

//go:embed job.sh
var jobLib string

// Extras are the shell functions only some workloads need, after
// Library(): the backend sweep's, the custom steps' and the custom job's.
func Extras(w plan.Workload) string {
	var b strings.Builder
	if w.Sweep != nil {
		b.WriteString("\n" + sweepLib)
	}
	if len(w.Custom) > 0 {
		b.WriteString("\n" + customLib)
	}
	if w.Job != nil {
		b.WriteString("\n" + jobLib)
	}
	return b.String()
}

// ShapeLines are the header lines of a sweep and of idle GPUs.
func ShapeLines(w plan.Workload) []string {
	var out []string
	if s := w.Sweep; s != nil {
		var names []string
		for _, r := range s.Runs {
			names = append(names, r.Backend)
		}
		out = append(out, fmt.Sprintf("Sweep:      one server per %s backend, in order: %s (default: vLLM chooses);", s.Kind, strings.Join(names, ", ")),
			fmt.Sprintf("            every step against each, results in %s/<%s-backend>/, sweep.tsv says which failed", w.ResultsPath, strings.TrimSuffix(s.Runs[0].Dir, "-"+s.Runs[0].Backend)))
	}
	if w.IdleGPUs > 0 {
		out = append(out, fmt.Sprintf("Idle:       %d of the %d reserved GPUs, on purpose: %s", w.IdleGPUs, w.GPUs, w.IdleReason))
	}
	return out
}
