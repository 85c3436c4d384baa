package main

import (
	"os"
	"path/filepath"
	"slices"
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

// dirArg is the workloads package a command reads: args[i] when given,
// else e.workloadsDir().
func (e *env) dirArg(args []string, i int) string {
	if len(args) > i {
		return args[i]
	}
	return e.workloadsDir()
}

// workloadsDir is the workloads package a command reads when none is
// named, as `go vet` reads the package it runs in: workloads/ here; else,
// inside a CUE module, this directory when it holds package workloads
// files (wlc run in workloads/); else the module's workloads/ (wlc run
// anywhere in the repository). Failing all, workloads/, which the loader
// then says does not exist.
func (e *env) workloadsDir() string {
	if isDir(filepath.Join(e.cwd, defaultWorkloadsDir)) {
		return defaultWorkloadsDir
	}
	cwd := filepath.Clean(e.cwd) // $PWD may hold "..": walk up from the directory itself
	root, ok := moduleRoot(cwd)
	if !ok {
		return defaultWorkloadsDir
	}
	if root != cwd && holdsPackage(cwd, defaultWorkloadsDir) {
		return "."
	}
	if isDir(filepath.Join(root, defaultWorkloadsDir)) {
		if rel, err := filepath.Rel(cwd, filepath.Join(root, defaultWorkloadsDir)); err == nil {
			return rel
		}
	}
	return defaultWorkloadsDir
}

// holdsPackage reports whether a .cue file in dir declares package pkg.
func holdsPackage(dir, pkg string) bool {
	files, _ := filepath.Glob(filepath.Join(dir, "*.cue"))
	return slices.ContainsFunc(files, func(f string) bool { return load.PackageName(f) == pkg })
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
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
