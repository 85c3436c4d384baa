package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/internal/bounded"
	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/internal/importer"
)

func newImportCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "import",
		Short: "Convert workloads from other tools into wlc CUE",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usagef("import needs a source format: wlc import perf-eval FILE|DIR...")
		},
	}
	cmd.AddCommand(newImportPerfEvalCmd(e))
	return cmd
}

func newImportPerfEvalCmd(e *env) *cobra.Command {
	var outDir string
	var force bool
	cmd := &cobra.Command{
		Use:   "perf-eval [-o DIR] FILE|DIR...",
		Short: "Convert perf-eval workload YAMLs into CUE workloads",
		Long: `Convert perf-eval workload YAMLs (a DIR is searched for *.yaml and *.yml,
recursively) into one <stem>.cue per workload, package workloads.

The conversion is literal: serve_args are word-split as perf-eval did and
known flags become typed serve fields, the rest serve.extra_args in order;
PD serving, SGLang, custom scripts and sweeps map to their wlc blocks.
Duplicate keys and fields wlc has no place for (vllm.build, aiperf, bench
assertions) are errors and that workload is skipped; unknown keys and
guessed precisions are warnings and left as TODO(import) comments.

perf-eval's lib/gpu_profiles.yaml (given, or found in a checkout given)
becomes profiles.cue: each fleet typed as perf-eval ran it (server_runtime
native + k8s_plugin is runtime k8s; the Slurm launcher's PERF_EVAL_SLURM_*
variables are the slurm block). Without it, the fleets the workloads name
get stubs to complete.

Without -o a single file is printed to stdout. With -o DIR every imported
workload is written into DIR at once (nothing is written if one cannot be,
or if a file exists and --force is not given). Then run wlc vet DIR.`,
		Example: `  wlc import perf-eval perf-eval/workloads/qwen3_5_b200.yaml
  wlc import perf-eval -o workloads/ perf-eval/workloads/
  wlc import perf-eval -o workloads/ perf-eval/   # workloads and lib/gpu_profiles.yaml`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			files, err := e.yamlFiles(args)
			if err != nil {
				return err
			}
			if outDir == "" && len(files) != 1 {
				return usagef("%d files to import: give -o DIR (stdout takes a single file)", len(files))
			}
			var all diag.List
			var arts []backends.Artifact
			var profiles []string
			byKey := map[string]string{}
			imported, warned, refused := 0, 0, 0
			// perf-eval's lib/gpu_profiles.yaml, when given: its fleets.
			var fleets *importer.ProfilesResult
			var fleetsFrom string
			var fleetsData []byte
			maxNodes := map[string]int{} // by profile, of the imported workloads
			for _, f := range files {
				data, err := bounded.ReadFile(f.abs, bounded.YAMLFile)
				if err != nil {
					all.Errorf(f.rel, 0, 0, "", "cannot read: %v", err)
					refused++
					continue
				}
				if isProfilesFile(f.abs) {
					// Converted once the workloads are read: their node
					// counts size a Slurm fleet.
					if fleetsData != nil {
						all.Errorf(f.rel, 0, 0, "", "profiles are already imported from %s; import one %s (perf-eval's lib/ or one branch's)", fleetsFrom, importer.ProfilesFile)
						refused++
						continue
					}
					fleetsData, fleetsFrom = data, f.rel
					continue
				}
				r := importer.PerfEvalAs(f.rel, f.key, data)
				if prev, dup := byKey[r.Key]; dup && !r.Refused() {
					r.Findings.Errorf(f.rel, 0, 0, "", "workload key %s is already imported from %s; rename one file", r.Key, prev)
				}
				all = append(all, r.Findings...)
				if r.Refused() {
					refused++
					continue
				}
				byKey[r.Key] = f.rel
				imported++
				if r.Findings.Count(diag.Warning) > 0 {
					warned++
				}
				arts = append(arts, backends.Artifact{Path: r.Key + ".cue", Data: r.Source})
				if r.Profile != "" && !slices.Contains(profiles, r.Profile) {
					profiles = append(profiles, r.Profile)
				}
				maxNodes[r.Profile] = max(maxNodes[r.Profile], r.Nodes)
			}
			if fleetsData != nil {
				r := importer.PerfEvalProfiles(fleetsFrom, fleetsData, maxNodes)
				all = append(all, r.Findings...)
				if r.Source == nil {
					refused++
				} else {
					fleets = &r
				}
			}
			// The fleets the workloads name that no imported profile
			// defines: a profile each to complete.
			var missing []string
			for _, p := range profiles {
				if fleets == nil || !slices.Contains(fleets.Names, p) {
					missing = append(missing, p)
				}
			}
			if fleets != nil {
				src := fleets.Source
				if len(missing) > 0 && len(arts) > 0 {
					src = append(slices.Clip(src), "\n"+profileStubs(missing)...)
					all.Warnf(fleetsFrom, 0, 0, "", "defines no %s, which imported workloads name: profiles.cue holds a stub of each to complete (or import the branch's %s that defines them)", strings.Join(missing, ", "), importer.ProfilesFile)
				}
				arts = append(arts, backends.Artifact{Path: "profiles.cue", Data: src})
			}
			// Into a directory that is no package yet: the typing lines,
			// a profile per fleet named, and the CUE module when there is
			// none above, so the result vets as it is.
			var started []string
			if outDir != "" && len(arts) > 0 {
				if cues, _ := filepath.Glob(filepath.Join(outDir, "*.cue")); len(cues) == 0 {
					arts = append(arts, backends.Artifact{Path: "wlc.cue", Data: []byte(initWlcCue)})
					started = append(started, "wlc.cue")
					if fleets == nil {
						arts = append(arts, backends.Artifact{Path: "profiles.cue", Data: []byte("package workloads\n\n" + profileStubs(missing))})
						started = append(started, "profiles.cue")
					}
					if _, ok := moduleRoot(outDir); !ok {
						mod, err := moduleFiles("example.com/benchmarks@v0")
						if err != nil {
							return err
						}
						arts = append(arts, mod...)
						started = append(started, "cue.mod/ (module example.com/benchmarks@v0)")
					}
				}
			}
			for _, d := range all {
				fmt.Fprintln(e.stderr, d.String())
			}
			if outDir == "" {
				for _, a := range arts {
					e.stdout.Write(a.Data)
				}
			} else if len(arts) > 0 {
				if !force {
					var exist []string
					for _, a := range arts {
						if _, err := os.Stat(filepath.Join(outDir, a.Path)); err == nil {
							exist = append(exist, filepath.Join(outDir, a.Path))
						}
					}
					if len(exist) > 0 {
						return failf("wlc import", "%s already exist(s); nothing was written (use --force to overwrite)", strings.Join(exist, ", "))
					}
				}
				if err := placeFiles(outDir, arts); err != nil {
					return commandError{"wlc import", err}
				}
			}
			where := "the file"
			if outDir != "" {
				where = outDir
			}
			if len(started) > 0 {
				fmt.Fprintf(e.stderr, "wlc import: started a workloads package in %s: %s\n", outDir, strings.Join(started, ", "))
			}
			if fleets != nil {
				into := ""
				if outDir != "" {
					into = " into " + filepath.Join(outDir, "profiles.cue")
				}
				fmt.Fprintf(e.stderr, "wlc import: %d profile(s) from %s%s: %s\n", len(fleets.Names), fleetsFrom, into, strings.Join(fleets.Names, ", "))
			}
			fmt.Fprintf(e.stderr, "wlc import: %d imported (%d with warnings), %d refused", imported, warned, refused)
			if imported > 0 || fleets != nil {
				if outDir != "" {
					fmt.Fprintf(e.stderr, "; next: wlc vet %s, and resolve the TODO(import) comments", outDir)
				} else {
					fmt.Fprintf(e.stderr, "; next: check %s with wlc vet and resolve the TODO(import) comments", where)
				}
			}
			fmt.Fprintln(e.stderr)
			if refused > 0 {
				return errReported
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&outDir, "out", "o", "", "write <stem>.cue files into `DIR` (default: stdout, one file)")
	cmd.Flags().BoolVar(&force, "force", false, "overwrite existing files in the -o directory")
	return cmd
}

type inputFile struct{ abs, rel, key string }

// yamlFiles expands the arguments: files as given, directories searched
// recursively for *.yaml and *.yml (hidden directories left out), each
// sorted.
func (e *env) yamlFiles(args []string) ([]inputFile, error) {
	var out []inputFile
	for _, a := range args {
		abs := a
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(e.cwd, a)
		}
		fi, err := os.Stat(abs)
		if err != nil {
			return nil, failf("wlc", "error: %s does not exist", a)
		}
		if !fi.IsDir() {
			out = append(out, inputFile{abs, a, importer.KeyFor(a)})
			continue
		}
		var found []inputFile
		err = filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && p != abs && strings.HasPrefix(d.Name(), ".") {
				// .buildkite/pipeline.yaml, .github/: a checkout's
				// machinery, never workloads.
				return filepath.SkipDir
			}
			if ext := filepath.Ext(p); !d.IsDir() && (ext == ".yaml" || ext == ".yml") {
				rel, _ := filepath.Rel(abs, p)
				// A per-model folder's gpu.yaml becomes model_gpu; a
				// perf-eval checkout's workloads/ folder names no key.
				key := strings.TrimPrefix(filepath.ToSlash(strings.TrimSuffix(rel, ext)), "workloads/")
				key = strings.ReplaceAll(key, "/", "_")
				found = append(found, inputFile{p, filepath.ToSlash(filepath.Join(a, rel)), key})
			}
			return nil
		})
		if err != nil {
			return nil, failf("wlc", "error: %w", err)
		}
		if len(found) == 0 {
			return nil, failf("wlc", "error: %s holds no *.yaml files", a)
		}
		sort.Slice(found, func(i, j int) bool { return found[i].rel < found[j].rel })
		out = append(out, found...)
	}
	return out, nil
}

// profileStubs is a profile per fleet the imported workloads name that
// no imported lib/gpu_profiles.yaml defines, to be completed by hand:
// perf-eval's gpu names are wlc's hardware ids for most fleets, and its
// default runtime was docker on the agent's host.
func profileStubs(names []string) string {
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("// The fleets the imported workloads name. TODO(import): complete each from\n")
	b.WriteString("// perf-eval's lib/gpu_profiles.yaml (queue, hf_home, env, server_runtime:\n")
	b.WriteString("// native + k8s_plugin is runtime \"k8s\"), or import that file with them;\n")
	b.WriteString("// vet names a hardware id the catalog does not know.\n")
	for _, n := range names {
		hw, _ := importer.ProfileHardware(n)
		if hw == "" {
			hw = n // vet says which ids the catalog has
		}
		fmt.Fprintf(&b, "profiles: %s: {\n\thardware: %q\n\truntime:  \"docker\"\n\tqueue:    %q\n\tdocker: {}\n}\n", cueLabel(n), hw, n)
	}
	return b.String()
}

// isProfilesFile says whether path is perf-eval's profile file
// (lib/gpu_profiles.yaml, or .yml).
func isProfilesFile(path string) bool {
	base := filepath.Base(path)
	return base == importer.ProfilesFile || base == strings.TrimSuffix(importer.ProfilesFile, ".yaml")+".yml"
}

var cueIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func cueLabel(s string) string {
	if cueIdent.MatchString(s) {
		return s
	}
	return strconv.Quote(s)
}
