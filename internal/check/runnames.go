package check

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/schema"
)

// Named is a workload as the run-name rule sees it.
type Named struct {
	Name, RunName string
	// Field is where a clash is reported (RunNameField).
	Field string
	// Where the workload is defined: the first in source order keeps
	// the name.
	File string
	Line int
}

// RunNameField is the field a clash of w's run name is reported on: its
// dashboard_name, else the workload itself ("").
func RunNameField(w *schema.Workload) string {
	if w.DashboardName != "" {
		return "dashboard_name"
	}
	return ""
}

// RunNames refuses two workloads with one run name (dashboard_name, else
// the key): it names the results folder and the dashboards' rows, so the
// second job would overwrite the first one's results and its rows would
// read as the same series. Each workload after the first that claims a
// name is refused, naming the one before it: the result maps its name to
// the finding (Path relative to the workload).
func RunNames(ws []Named) map[string]Diagnostic {
	order := slices.Clone(ws)
	slices.SortStableFunc(order, func(a, b Named) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Name, b.Name))
	})
	first := map[string]Named{}
	refused := map[string]Diagnostic{}
	for _, w := range order {
		prev, taken := first[w.RunName]
		if !taken {
			first[w.RunName] = w
			continue
		}
		refused[w.Name] = Diagnostic{Path: w.Field, Severity: diag.Error, Message: fmt.Sprintf("run name %q is already the run name of workload %s (%s): it names the results folder and the dashboards' rows, so the two jobs would mix their results; rename one of them or give it another dashboard_name",
			w.RunName, prev.Name, prev.File)}
	}
	return refused
}
