package main

import (
	"fmt"

	"github.com/wlcdev/wlc/internal/load"
	"github.com/wlcdev/wlc/internal/plan"
)

// resolve turns loaded workloads into plans with the export-time
// overrides read from the environment.
func (e *env) resolve(r *load.Result, ws []load.Workload) ([]plan.Workload, error) {
	cat := plan.Catalog{Profiles: r.Profiles, Hardware: r.Hardware, Architectures: r.Architectures}
	ov := plan.OverridesFromEnv(e.getenv)
	out := make([]plan.Workload, 0, len(ws))
	for _, w := range ws {
		p, err := plan.Resolve(w.Workload, w.File, cat, ov)
		if err != nil {
			return nil, fmt.Errorf("%s:%d:%d: %w", w.File, w.Line, w.Column, err)
		}
		p.Recipe = w.Recipe
		out = append(out, p)
	}
	return out, nil
}

func dirArg(args []string, i int) string {
	if len(args) > i {
		return args[i]
	}
	return defaultWorkloadsDir
}
