package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/backends/registry"
	"github.com/wlcdev/wlc/backends/runner"
	"github.com/wlcdev/wlc/internal/atomicdir"
	"github.com/wlcdev/wlc/internal/load"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/plan/plandiff"
	"github.com/wlcdev/wlc/internal/plan/selection"
)

type exportOptions struct {
	backend   string
	workloads string
	nightly   bool
	all       bool
	out       string
	recipes   string
	// changedSince keeps the jobs whose hash is new since this revision
	// (or old workloads directory).
	changedSince string
}

// nightlyDefault is implemented by backends whose unselected export is the
// nightly set (Buildkite, like perf-eval's generator); others export all.
type nightlyDefault interface{ NightlyByDefault() bool }

func newExportCmd(e *env) *cobra.Command {
	o := &exportOptions{}
	cmd := &cobra.Command{
		Use:   "export --backend NAME [--workloads a,b | --nightly | --all] [-o DIR] [dir]",
		Short: "Lower workloads into CI jobs through a backend",
		Long: `export validates the workloads package (default workloads/), resolves the
selected workloads and lowers them through one backend. Nothing is written
unless every workload lowers cleanly. With -o DIR the files appear all at
once: DIR then holds exactly this export's files (and a .wlc-export list of
them), replacing a previous export's set in one step; a DIR holding files
wlc did not write is refused.
A backend that produces one artifact prints it to stdout when -o is absent.

Selection: --workloads (or the WORKLOADS variable), comma or newline
separated, by workload name, file stem or file path; --nightly for every
nightly workload; --all for every workload. Without any, the buildkite
backend exports the nightly set and the others every workload.
--changed-since REV keeps, of the selection (every workload when none is
given), the jobs whose job hash is new since REV: added or changed, as
wlc diff REV says (a renamed job ran before and is left out). Nothing
changed is no error: nothing is exported (with -o, DIR is emptied). A default
selection keeps what the backend can run and names what it skipped (a
multi-node workload on docker); an explicit one fails instead.

Backends:
` + backendList(),
		Example: `  wlc export --backend buildkite -o .wlc-export && bash .wlc-export/upload.sh
  wlc export --backend slurm -o out/slurm --workloads deepseek_v4_flash_gb300_slurm
  WORKLOADS=qwen3_5_b200,gpt_oss_120b_h200 wlc export --backend docker -o out/docker`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExport(e, o, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.backend, "backend", "", "backend: "+strings.Join(registry.Names(), ", "))
	f.StringVar(&o.workloads, "workloads", "", "comma-separated workloads to export (default: $WORKLOADS)")
	f.BoolVar(&o.nightly, "nightly", false, "export the nightly workloads")
	f.BoolVar(&o.all, "all", false, "export every workload")
	f.StringVarP(&o.out, "output", "o", "", "directory to write artifacts into")
	f.StringVar(&o.recipes, "recipes", "", recipesFlagUsage)
	f.StringVar(&o.changedSince, "changed-since", "", "export only the jobs whose job hash is new since this git revision (or old workloads directory), as wlc diff reports them added or changed; without a selection, among every workload")
	cmd.RegisterFlagCompletionFunc("workloads", e.completeNameList(0, false))
	cmd.RegisterFlagCompletionFunc("backend", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return registry.Names(), cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

func runExport(e *env, o *exportOptions, args []string) error {
	if o.backend == "" {
		return usagef("--backend is required; valid backends: %s", strings.Join(registry.Names(), ", "))
	}
	b, err := registry.Lookup(o.backend)
	if err != nil {
		return usageError{err.Error()}
	}
	entries := selection.Split(o.workloads)
	if len(entries) == 0 {
		entries = selection.Split(e.getenv("WORKLOADS"))
	}
	if n := btoi(len(entries) > 0) + btoi(o.nightly) + btoi(o.all); n > 1 {
		return usagef("choose one of --workloads (or WORKLOADS), --nightly and --all")
	}

	dir := e.dirArg(args, 0)
	r, _ := e.loadWorkloads(dir, e.loadOptions(o.recipes))
	if err := e.requireClean(r); err != nil {
		return err
	}
	var cands []selection.Candidate
	for _, w := range r.Workloads {
		cands = append(cands, selection.Candidate{Name: w.Name, File: w.File, Nightly: w.Nightly})
	}
	var names []string
	switch {
	case len(entries) > 0:
		names, err = selection.Pick(cands, e.selectionEntries(r, entries))
	case o.nightly:
		names, err = selection.Nightly(cands)
	case o.all:
		for _, c := range cands {
			names = append(names, c.Name)
		}
	case o.changedSince != "":
		for _, c := range cands {
			names = append(names, c.Name)
		}
	default:
		if nd, ok := b.(nightlyDefault); ok && nd.NightlyByDefault() {
			names, err = selection.Nightly(cands)
		} else {
			for _, c := range cands {
				names = append(names, c.Name)
			}
		}
	}
	if err == nil && len(names) == 0 {
		err = fmt.Errorf("the selection is empty")
	}
	if err != nil {
		return commandError{"wlc export", err}
	}
	ws := make([]load.Workload, 0, len(names))
	for _, n := range names {
		w, _ := r.Workload(n)
		ws = append(ws, w)
	}
	plans, err := e.resolve(r, ws)
	if err != nil {
		return commandError{"wlc export", err}
	}
	var changed *changedSet
	if o.changedSince != "" {
		if changed, err = e.changedSince(o.changedSince, dir, o.recipes, plans); err != nil {
			return err
		}
		plans = changed.plans
		if len(plans) == 0 {
			why := fmt.Sprintf("no selected job changed since %s", changed.since)
			fmt.Fprintf(e.stderr, "wlc export: %s; nothing to export\n", why)
			if o.out != "" {
				var arts []backends.Artifact
				if idle, ok := b.(backends.Idler); ok {
					arts = idle.Idle(why)
				}
				return writeSet(e, b.Name(), o.out, arts)
			}
			return nil
		}
		fmt.Fprintf(e.stderr, "wlc export: %d of %d selected job(s) changed since %s: %s\n", len(plans), len(ws), changed.since, strings.Join(changed.names(), ", "))
	}
	if acc, ok := b.(backends.Accepter); ok && len(entries) > 0 {
		// An explicitly selected workload the backend cannot run is the
		// user's error: say where it is defined, every one at once.
		refused := false
		for i, p := range plans {
			if err := acc.Accepts(p); err != nil {
				fmt.Fprintf(e.stderr, "%s:%d:%d: error: workloads.%s: the %s backend cannot run it: %v\n", ws[i].File, ws[i].Line, ws[i].Column, p.Name, b.Name(), err)
				refused = true
			}
		}
		if refused {
			return errReported
		}
	}
	if acc, ok := b.(backends.Accepter); ok && len(entries) == 0 {
		// A default selection (nightly, all) spans every fleet; keep what
		// this backend can run and say what was left out.
		kept := plans[:0]
		var skipped []string
		var first error
		for _, p := range plans {
			if err := acc.Accepts(p); err != nil {
				skipped = append(skipped, p.Name)
				if first == nil {
					first = fmt.Errorf("%s: %w", p.Name, err)
				}
				continue
			}
			kept = append(kept, p)
		}
		plans = kept
		if len(skipped) > 0 {
			fmt.Fprintf(e.stderr, "wlc export: the %s backend skips %d workload(s): %s (%v)\n", b.Name(), len(skipped), strings.Join(skipped, ", "), first)
		}
		if len(plans) == 0 {
			return failf("wlc export", "the %s backend accepts none of the selected workloads", b.Name())
		}
	}
	arts, err := b.Lower(plans, backends.Options{Env: e.environ(), WorkloadsDir: dir})
	if err == nil {
		err = backends.CheckArtifacts(arts)
	}
	if err != nil {
		return failf("wlc export", "%s: %w", b.Name(), err)
	}
	if changed != nil && b.Name() == "buildkite" {
		changed.annotate(arts)
	}
	if o.out == "" {
		if len(arts) != 1 {
			return usagef("the %s backend produced %d files; write them with -o DIR (%s)", b.Name(), len(arts), artifactNames(arts))
		}
		_, err := e.stdout.Write(arts[0].Data)
		return err
	}
	if err := writeSet(e, b.Name(), o.out, arts); err != nil {
		return commandError{"wlc export", err}
	}
	for _, a := range arts {
		fmt.Fprintln(e.stdout, filepath.Join(o.out, filepath.FromSlash(a.Path)))
	}
	return nil
}

// writeSet makes out hold exactly the artifacts, all at once (see
// internal/atomicdir): a failed or killed export leaves the previous set.
func writeSet(e *env, backend, out string, arts []backends.Artifact) error {
	res, err := atomicdir.Replace(out, "# written by wlc export --backend "+backend, toFiles(arts))
	if err != nil {
		return fmt.Errorf("%v; nothing was written, %s is as it was", err, out)
	}
	if res.Stale != nil {
		fmt.Fprintf(e.stderr, "wlc export: warning: the new set is in %s, but: %v\n", out, res.Stale)
	}
	return nil
}

// placeFiles writes artifacts into a directory that holds the user's own
// files (init, import): each file whole, all taken back on error.
func placeFiles(dir string, arts []backends.Artifact) error {
	return atomicdir.Place(dir, toFiles(arts))
}

func toFiles(arts []backends.Artifact) []atomicdir.File {
	files := make([]atomicdir.File, len(arts))
	for i, a := range arts {
		files[i] = atomicdir.File{Path: a.Path, Data: a.Data, Mode: a.Mode}
	}
	return files
}

func (e *env) environ() map[string]string {
	m := map[string]string{}
	for _, kv := range e.envList() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// backendList is the --help table of backends and what they produce.
func backendList() string {
	var b strings.Builder
	for _, be := range registry.All() {
		fmt.Fprintf(&b, "  %-10s %s\n", be.Name(), be.Summary())
	}
	return strings.TrimRight(b.String(), "\n")
}

// artifactNames lists the first few artifact paths for a message.
func artifactNames(arts []backends.Artifact) string {
	var names []string
	for i, a := range arts {
		if i == 3 {
			names = append(names, "…")
			break
		}
		names = append(names, a.Path)
	}
	return strings.Join(names, ", ")
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// changedSet is the selection's jobs whose hash is new since a revision.
type changedSet struct {
	since  string // the revision, for people
	plans  []plan.Workload
	hashes []string
}

// changedSince keeps the plans whose job is added or changed since rev
// (wlc diff's comparison, by name then by hash).
func (e *env) changedSince(rev, dir, recipes string, plans []plan.Workload) (*changedSet, error) {
	old, since, err := e.oldSide(rev, dir, recipes)
	if err != nil {
		return nil, err
	}
	jobs, err := plandiff.NewJobs(plans)
	if err != nil {
		return nil, commandError{"wlc export", err}
	}
	touched := map[string]bool{}
	for _, n := range plandiff.Compare(since, "working tree", old, jobs).Touched() {
		touched[n] = true
	}
	c := &changedSet{since: since}
	for _, j := range jobs {
		if touched[j.Plan.Name] {
			c.plans = append(c.plans, j.Plan)
			c.hashes = append(c.hashes, j.Hash)
		}
	}
	return c, nil
}

func (c *changedSet) names() []string {
	out := make([]string, len(c.plans))
	for i, p := range c.plans {
		out[i] = p.Name
	}
	return out
}

// annotate heads every pipeline file with what was selected and why: a
// YAML comment, which the agent ignores and a reader of the upload sees.
func (c *changedSet) annotate(arts []backends.Artifact) {
	var b strings.Builder
	fmt.Fprintf(&b, "# wlc export --changed-since: only the %d job(s) whose job hash is new since %s:\n", len(c.plans), runner.Comment(c.since))
	for i, p := range c.plans {
		fmt.Fprintf(&b, "#   %s %s\n", runner.Comment(p.Name), c.hashes[i])
	}
	for i, a := range arts {
		if strings.HasSuffix(a.Path, ".yml") || strings.HasSuffix(a.Path, ".yaml") {
			arts[i].Data = append([]byte(b.String()), a.Data...)
		}
	}
}
