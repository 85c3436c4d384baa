package main

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/internal/load"
	"github.com/wlcdev/wlc/schema"
)

const initWlcCue = `// The workloads package: every file here adds to ` + "`profiles` and `workloads`" + `.
// These lines type them all and hand each workload the one profile it
// names (W.profile), so a typo in a profile, a field or a value is an error.
package workloads

import "github.com/wlcdev/wlc/schema"

` + schema.ProfilesTyping + "\n" + schema.WorkloadsTyping + "\n" + schema.ProfileNamesTyping + "\n"

const initProfiles = `package workloads

// A fleet: which GPUs, how jobs reach them, what every workload inherits.
// See ` + "`wlc show`" + ` and the schema's comments (cue.mod/gen/github.com/wlcdev/wlc/schema).
profiles: H200: {
	hardware: "H200"
	runtime:  "docker" // docker | k8s | slurm
	queue:    "h200"   // Buildkite agents.queue
	hf_home:  "/mnt/hf-cache"
	docker: {}
}
`

const initExample = `package workloads

workloads: example_h200: {
	profile:       "H200"
	gpus_per_node: 1
	model:         "Qwen/Qwen3-8B"
	precision:     "bf16"
	vllm_bench: configs: [{
		name:            "1k-in-1k-out"
		input_len:       1024
		output_len:      1024
		max_concurrency: [8, 32]
		num_prompts:     [64, 256]
	}]
}
`

var cueModulePath = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]*\.[a-z]+(/[A-Za-z0-9._~-]+)*(@v[0-9]+)?$`)

func newInitCmd(e *env) *cobra.Command {
	var module string
	var updateSchema bool
	cmd := &cobra.Command{
		Use:   "init [dir]",
		Short: "Start a workloads repository: CUE module, schema, a profile and an example",
		Long: `init writes a CUE module (cue.mod/module.cue), a copy of wlc's schema under
cue.mod/gen (so the plain cue CLI and editors see the same types wlc
checks with), and a workloads package with one profile and one example
workload. It never overwrites a file; run it in an empty directory or one
without those files.

--update-schema replaces only the schema copy of the repository at or
above dir with this wlc's schema (after upgrading wlc, whose vet warns
that the copy differs), and nothing else.`,
		Example: `  wlc init --module example.com/benchmarks bench
  cd bench && wlc vet
  wlc init --update-schema`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if updateSchema {
				if cmd.Flags().Changed("module") {
					return usagef("--update-schema keeps the repository's module; drop --module")
				}
				dir := "."
				if len(args) == 1 {
					dir = args[0]
				}
				return updateSchemaCopy(e, dir)
			}
			if !cueModulePath.MatchString(module) {
				return usagef("--module %q is not a CUE module path (a domain, then path elements, e.g. example.com/benchmarks)", module)
			}
			if !strings.Contains(module, "@") {
				module += "@v0"
			}
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			files, err := moduleFiles(module)
			if err != nil {
				return err
			}
			files = append(files,
				backends.Artifact{Path: "workloads/wlc.cue", Data: []byte(initWlcCue)},
				backends.Artifact{Path: "workloads/profiles.cue", Data: []byte(initProfiles)},
				backends.Artifact{Path: "workloads/example.cue", Data: []byte(initExample)},
			)
			var exist []string
			for _, f := range files {
				if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f.Path))); err == nil {
					exist = append(exist, f.Path)
				}
			}
			if len(exist) > 0 {
				return failf("wlc init", "%s already has %s; nothing was written", dir, strings.Join(exist, ", "))
			}
			if err := placeFiles(dir, files); err != nil {
				return commandError{"wlc init", err}
			}
			next := "wlc vet"
			if filepath.Clean(dir) != "." {
				next = "cd " + dir + " && wlc vet"
			}
			fmt.Fprintf(e.stdout, "wrote a workloads repository in %s (module %s); next: %s\n", dir, module, next)
			return nil
		},
	}
	cmd.Flags().StringVar(&module, "module", "example.com/benchmarks", "CUE module path of the new repository")
	cmd.Flags().BoolVar(&updateSchema, "update-schema", false, "replace only the schema copy under cue.mod/gen with this wlc's schema")
	return cmd
}

// updateSchemaCopy makes the schema copy of the module at or above dir
// this binary's schema: every file written (each whole, all put back on
// error), then the copy's .cue files the schema no longer has removed, so
// the plain cue CLI and editors check what wlc checks.
func updateSchemaCopy(e *env, dir string) error {
	const what = "wlc init --update-schema"
	root, ok := moduleRoot(dir)
	if !ok {
		return failf(what, "no cue.mod/module.cue in %s or any parent; run it in the workloads repository (wlc init starts one)", dir)
	}
	copyDir := load.SchemaCopy(root)
	if copyDir == "" {
		return failf(what, "%s is wlc's own repository (or its cue.mod/module.cue names no module), whose schema is schema/ itself, not a copy", root)
	}
	files, err := schemaFiles()
	if err != nil {
		return commandError{what, err}
	}
	if err := placeFiles(root, files); err != nil {
		return commandError{what, err}
	}
	keep := map[string]bool{}
	for _, f := range files {
		keep[filepath.Join(root, filepath.FromSlash(f.Path))] = true
	}
	// The package's other files, which CUE would load beside the schema
	// (a subdirectory is another package, and not wlc's to touch).
	var removed []string
	present, _ := filepath.Glob(filepath.Join(copyDir, "*.cue"))
	for _, p := range present {
		if keep[p] {
			continue
		}
		if err := os.Remove(p); err != nil {
			return commandError{what, fmt.Errorf("the new schema is in place, but removing a file it no longer has: %w", err)}
		}
		rel, _ := filepath.Rel(root, p)
		removed = append(removed, filepath.ToSlash(rel))
	}
	shown := copyDir
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, copyDir); err == nil {
			shown = rel
		}
	}
	fmt.Fprintf(e.stdout, "updated the schema copy in %s to this wlc's schema (%d files)\n", filepath.ToSlash(shown), len(files))
	for _, r := range removed {
		fmt.Fprintf(e.stdout, "removed %s (no longer part of the schema)\n", r)
	}
	return nil
}

// moduleFiles are a new CUE module's files: cue.mod/module.cue and a copy
// of wlc's schema under cue.mod/gen, for the plain cue CLI and editors.
func moduleFiles(module string) ([]backends.Artifact, error) {
	copied, err := schemaFiles()
	mod := backends.Artifact{Path: "cue.mod/module.cue", Data: []byte(fmt.Sprintf("module: %q\nlanguage: version: \"v0.17.1\"\n", module))}
	return append([]backends.Artifact{mod}, copied...), err
}

// schemaFiles are the copy of wlc's schema a module keeps under cue.mod/gen.
func schemaFiles() ([]backends.Artifact, error) {
	var files []backends.Artifact
	err := fs.WalkDir(schema.Files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := schema.Files.ReadFile(p)
		files = append(files, backends.Artifact{Path: path.Join(schema.CopyDir, p), Data: data})
		return err
	})
	return files, err
}

// moduleRoot is the nearest directory at or above dir (which may not exist
// yet) holding cue.mod/module.cue.
func moduleRoot(dir string) (string, bool) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	for d := abs; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(filepath.Join(d, "cue.mod", "module.cue")); err == nil && !fi.IsDir() {
			return d, true
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}
