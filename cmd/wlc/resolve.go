package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/wlcdev/wlc/internal/load"
	"github.com/wlcdev/wlc/internal/par"
	"github.com/wlcdev/wlc/internal/plan"
)

// resolve turns loaded workloads into plans with the export-time
// overrides read from the environment.
func (e *env) resolve(r *load.Result, ws []load.Workload) ([]plan.Workload, error) {
	ov := plan.OverridesFromEnv(e.getenv)
	// Each plan is its workload's alone (the catalog is read, never
	// written): resolved on every CPU, the first failure in order.
	out := make([]plan.Workload, len(ws))
	errs := make([]error, len(ws))
	par.Do(len(ws), func(i int) { out[i], errs[i] = r.Resolve(ws[i], ov) })
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func dirArg(args []string, i int) string {
	if len(args) > i {
		return args[i]
	}
	return defaultWorkloadsDir
}

// selectionEntries makes entries that name existing files relative to the
// module root, the way workloads' files are recorded, so a path works
// from any working directory.
func (e *env) selectionEntries(r *load.Result, entries []string) []string {
	out := make([]string, len(entries))
	for i, en := range entries {
		out[i] = en
		p := en
		if !filepath.IsAbs(p) {
			p = filepath.Join(e.cwd, p)
		}
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && r.ModuleRoot != "" {
			if rel, err := filepath.Rel(r.ModuleRoot, p); err == nil && !strings.HasPrefix(rel, "..") {
				out[i] = filepath.ToSlash(rel)
			}
		}
	}
	return out
}

// jobHashes are the workloads' job hashes (plan.JobHash), resolved with
// the export-time overrides as export resolves them.
func (e *env) jobHashes(r *load.Result, ws []load.Workload) ([]string, error) {
	ps, err := e.resolve(r, ws)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(ps))
	for i, p := range ps {
		if out[i], err = plan.JobHash(p); err != nil {
			return nil, err
		}
	}
	return out, nil
}
