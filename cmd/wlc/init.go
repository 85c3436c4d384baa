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
	cmd := &cobra.Command{
		Use:   "init [dir]",
		Short: "Start a workloads repository: CUE module, schema, a profile and an example",
		Long: `init writes a CUE module (cue.mod/module.cue), a copy of wlc's schema under
cue.mod/gen (so the plain cue CLI and editors see the same types wlc
checks with), and a workloads package with one profile and one example
workload. It never overwrites a file; run it in an empty directory or one
without those files.`,
		Example: `  wlc init --module example.com/benchmarks bench
  cd bench && wlc vet`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
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
			fmt.Fprintf(e.stdout, "wrote a workloads repository in %s (module %s); next: cd %s && wlc vet\n", dir, module, dir)
			return nil
		},
	}
	cmd.Flags().StringVar(&module, "module", "example.com/benchmarks", "CUE module path of the new repository")
	return cmd
}

// moduleFiles are a new CUE module's files: cue.mod/module.cue and a copy
// of wlc's schema under cue.mod/gen, for the plain cue CLI and editors.
func moduleFiles(module string) ([]backends.Artifact, error) {
	files := []backends.Artifact{{Path: "cue.mod/module.cue", Data: []byte(fmt.Sprintf("module: %q\nlanguage: version: \"v0.17.1\"\n", module))}}
	err := fs.WalkDir(schema.Files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := schema.Files.ReadFile(p)
		files = append(files, backends.Artifact{Path: path.Join("cue.mod/gen", schema.ImportPath, p), Data: data})
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
