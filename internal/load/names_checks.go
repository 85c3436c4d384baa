package load

import (
	"fmt"
	"sort"
)

// checkRunNames refuses two workloads with one run name (dashboard_name,
// else the key): it names the results folder and the dashboards' rows, so
// the second job would overwrite the first one's results and its rows
// would read as the same series. Reported on each workload after the first
// that claims the name, naming the one before it. It returns the names of
// the workloads refused.
// at holds where each workload's clash is reported (see runNameField).
func (l *loader) checkRunNames(ws []Workload, at map[string]position) map[string]bool {
	type claim struct{ name, file string }
	order := make([]Workload, len(ws))
	copy(order, ws)
	// Source order: the first definition keeps the name.
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Name < b.Name
	})
	first := map[string]claim{}
	refused := map[string]bool{}
	for _, w := range order {
		run := w.RunName()
		prev, taken := first[run]
		if !taken {
			first[run] = claim{w.Name, w.File}
			continue
		}
		path := "workloads." + quoteLabel(w.Name)
		if f := runNameField(w); f != "" {
			path += "." + f
		}
		l.addAt(at[w.Name], path, fmt.Sprintf("run name %q is already the run name of workload %s (%s): it names the results folder and the dashboards' rows, so the two jobs would mix their results; rename one of them or give it another dashboard_name",
			run, prev.name, prev.file))
		refused[w.Name] = true
	}
	return refused
}

// runNameField is the field a clash of w's run name is reported on: its
// dashboard_name, else its label.
func runNameField(w Workload) string {
	if w.DashboardName != "" {
		return "dashboard_name"
	}
	return ""
}
