package schema

// RunName is the workload's name where perf-eval showed it: the Buildkite
// step label, the results folder and the dashboards' workload key. It is
// dashboard_name when set (an imported workload keeps perf-eval's name
// there), else the workload's key.
func (w Workload) RunName() string {
	if w.DashboardName != "" {
		return w.DashboardName
	}
	return w.Name
}
