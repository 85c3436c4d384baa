package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/backends/registry"
	"github.com/wlcdev/wlc/backends/slurm"
	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/internal/load"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/plan/plandiff"
)

type diffOptions struct {
	format    string
	results   string
	workloads string
	nightly   bool
	recipes   string
}

func newDiffCmd(e *env) *cobra.Command {
	o := &diffOptions{}
	cmd := &cobra.Command{
		Use:   "diff [REV] [dir]",
		Short: "Show what a change does to the jobs and to their GPU-hours",
		Long: `diff compiles the workloads package (dir, default workloads/) at a git
revision and in the working tree, and reports for every workload whether
its job was added, removed, renamed (same job hash, new name), changed
(the hash differs) or unchanged. For a changed job it lists what runs
differently: the image and why it was chosen, env entries and secrets,
serve options added, removed or changed (read as options with the engine's
option table, not as text), bench runs, lm_eval tasks, BFCL categories,
custom steps, GPUs, nodes and parallel sizes, and the backend files that
change. It ends with the GPU-hours the selection uses before and after:
per job, the GPUs it reserves times its duration, measured (the last run
of the same job hash among the provenance.json files under --results) or
estimated (its time budget: timeout_in_minutes, or a Slurm profile's
time_limit when shorter), each figure labelled which, and each profile
whose share changes (a job moved to another fleet).

REV is a git revision (default: the merge base of HEAD with the default
branch: origin/HEAD, else main, else master), or a directory holding the
old workloads package. Errors at either side are reported as vet reports
them, the revision's files named REV:path.`,
		Example: `  wlc diff
  wlc diff origin/main --format markdown | buildkite-agent annotate --context wlc-diff
  wlc diff HEAD~1 --results results/ --format json`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDiff(e, o, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.format, "format", "text", "output format: text, markdown or json")
	f.StringVar(&o.results, "results", "", "directory of finished runs: their provenance.json files give measured durations")
	f.StringVar(&o.workloads, "workloads", "", "comma-separated workload names to compare (default: every workload)")
	f.BoolVar(&o.nightly, "nightly", false, "compare only nightly workloads (nightly on either side)")
	f.StringVar(&o.recipes, "recipes", "", recipesFlagUsage)
	return cmd
}

func runDiff(e *env, o *diffOptions, args []string) error {
	switch o.format {
	case "text", "markdown", "json":
	default:
		return usagef("--format must be text, markdown or json, not %q", o.format)
	}
	rev, dir := "", e.dirArg(args, 1)
	if len(args) > 0 {
		rev = args[0]
	}
	var runs map[string]plandiff.Run
	if o.results != "" {
		fi, err := os.Stat(o.results)
		if err != nil || !fi.IsDir() {
			return usagef("--results %s: not a directory of finished runs", o.results)
		}
		var errs []error
		runs, errs = plandiff.ReadRuns(os.DirFS(o.results), filepath.ToSlash(o.results))
		for _, err := range errs {
			fmt.Fprintf(e.stderr, "%v\n", err)
		}
		if len(errs) > 0 {
			return failf("wlc diff", "%d unreadable %s file(s) under %s; fix or remove them", len(errs), plandiff.ProvenanceFile, o.results)
		}
	}
	cmp, err := e.compareSides(rev, dir, o.recipes)
	if err != nil {
		return err
	}
	keep, err := diffSelection(o, cmp)
	if err != nil {
		return err
	}
	report := plandiff.Compare(cmp.oldName, cmp.newName, filterJobs(cmp.old, keep), filterJobs(cmp.new, keep))
	opts := backends.Options{Env: e.environ(), WorkloadsDir: dir}
	report.SetArtifacts(func(p plan.Workload) map[[2]string][]byte { return lowerAll(p, opts) })
	report.Price(runs, jobBudget)
	switch o.format {
	case "json":
		return report.WriteJSON(e.stdout)
	case "markdown":
		return report.WriteMarkdown(e.stdout)
	}
	return report.WriteText(e.stdout)
}

// sides are the jobs of the two compilations.
type sides struct {
	oldName, newName string
	old, new         []plandiff.Job
}

// compareSides loads and resolves the workloads at rev (see oldPackage)
// and in dir, reporting every error of both before failing.
func (e *env) compareSides(rev, dir, recipes string) (*sides, error) {
	s := &sides{newName: "working tree"}
	var oldErr error
	s.old, s.oldName, oldErr = e.oldSide(rev, dir, recipes)
	if oldErr != nil && !errors.Is(oldErr, errReported) {
		return nil, oldErr
	}
	r, _ := e.loadWorkloads(dir, e.loadOptions(recipes))
	if len(r.Diags) > 0 {
		r.Diags.WriteText(e.stderr)
	}
	if r.Diags.HasErrors() {
		fmt.Fprintf(e.stderr, "wlc diff: %d error(s) in the working tree's workloads; fix them and run wlc vet again\n", r.Diags.Count(diag.Error))
		return nil, errReported
	}
	if oldErr != nil {
		return nil, oldErr
	}
	var err error
	if s.new, err = e.jobs(r); err != nil {
		return nil, commandError{"wlc diff", err}
	}
	return s, nil
}

// oldSide is the jobs of the workloads package dir at rev (see
// oldPackage) and the side's name for people. Its findings are printed
// as vet prints them, each file named REV:path; errors among them make
// the error errReported.
func (e *env) oldSide(rev, dir, recipes string) ([]plandiff.Job, string, error) {
	oldDir, name, cleanup, err := e.oldPackage(rev, dir)
	if err != nil {
		return nil, "", err
	}
	defer cleanup()
	if oldDir.path == "" {
		return nil, name, nil
	}
	lo := e.loadOptions(recipes)
	saved := e.cwd
	e.cwd = oldDir.cwd
	r, _ := e.loadWorkloads(oldDir.path, lo)
	e.cwd = saved
	for i := range r.Diags {
		if oldDir.prefix != "" && r.Diags[i].File != "" {
			r.Diags[i].File = oldDir.prefix + r.Diags[i].File
		}
	}
	if len(r.Diags) > 0 {
		r.Diags.WriteText(e.stderr)
	}
	if r.Diags.HasErrors() {
		fmt.Fprintf(e.stderr, "wlc: %d error(s) in the workloads at %s\n", r.Diags.Count(diag.Error), name)
		return nil, name, errReported
	}
	jobs, err := e.jobs(r)
	if err != nil {
		return nil, name, commandError{"wlc", fmt.Errorf("at %s: %w", name, err)}
	}
	return jobs, name, nil
}

func (e *env) jobs(r *load.Result) ([]plandiff.Job, error) {
	ps, err := e.resolve(r, r.Workloads)
	if err != nil {
		return nil, err
	}
	return plandiff.NewJobs(ps)
}

// oldTree is where the old side's package was put.
type oldTree struct {
	// path is the package directory ("": it did not exist at the
	// revision, so the old side has no jobs); cwd is the directory that
	// plays the working directory there, so positions print as in the
	// working tree; prefix (REV:) names the revision in them.
	path, cwd, prefix string
}

// oldPackage finds the old side: a directory as given, or dir's module
// at a git revision, written out of git into a temporary directory
// (cleanup removes it).
func (e *env) oldPackage(rev, dir string) (oldTree, string, func(), error) {
	none := func() {}
	if rev != "" {
		if _, err := e.git("rev-parse", "--verify", "--quiet", rev+"^{commit}"); err != nil {
			if fi, serr := os.Stat(e.abs(rev)); serr == nil && fi.IsDir() {
				return oldTree{path: rev, cwd: e.cwd}, rev, none, nil
			}
			why := ""
			if _, gerr := e.git("rev-parse", "--git-dir"); gerr != nil {
				why = " (this directory is in no git repository)"
			} else if _, herr := e.git("rev-parse", "--verify", "--quiet", "HEAD^{commit}"); herr != nil {
				why = " (the repository has no commit yet)"
			}
			return oldTree{}, "", none, usagef("%s is neither a git revision nor a directory%s; name a commit, or a directory holding the old workloads package", rev, why)
		}
	}
	top, err := e.git("rev-parse", "--show-toplevel")
	if err != nil {
		return oldTree{}, "", none, usagef("no git repository here to take a revision from (%v); name a directory holding the old workloads package instead", err)
	}
	label := rev
	if rev == "" {
		if rev, label, err = e.defaultBase(); err != nil {
			return oldTree{}, "", none, err
		}
	}
	commit, err := e.git("rev-parse", "--verify", rev+"^{commit}")
	if err != nil {
		return oldTree{}, "", none, usagef("%s is not a git revision: %v", rev, err)
	}
	label = fmt.Sprintf("%s (%s)", label, commit[:min(12, len(commit))])
	// git prints the top level with symlinks resolved; so must the paths
	// made relative to it.
	absDir, err := filepath.EvalSymlinks(e.abs(dir))
	if err != nil {
		return oldTree{}, "", none, usagef("%s: %v", dir, err)
	}
	cwd, err := filepath.EvalSymlinks(e.cwd)
	if err != nil {
		return oldTree{}, "", none, err
	}
	relDir, err1 := filepath.Rel(top, absDir)
	relCwd, err2 := filepath.Rel(top, cwd)
	if err := errors.Join(err1, err2); err != nil || strings.HasPrefix(relDir, "..") || strings.HasPrefix(relCwd, "..") {
		return oldTree{}, "", none, usagef("%s is outside the git repository at %s", dir, top)
	}
	tmp, err := os.MkdirTemp("", "wlc-diff-")
	if err != nil {
		return oldTree{}, "", none, err
	}
	cleanup := func() { os.RemoveAll(tmp) }
	// The module root's subtree holds the package and its cue.mod.
	root := moduleRootRel(absDir, top)
	if _, err := e.git("rev-parse", "--verify", "--quiet", commit+":"+root); root != "." && err != nil {
		// The module is new since the revision: nothing to extract.
		root = ""
	}
	if root != "" {
		if err := e.extract(commit, root, tmp); err != nil {
			cleanup()
			return oldTree{}, "", none, commandError{"wlc diff", fmt.Errorf("reading %s at %s: %w", root, label, err)}
		}
	}
	t := oldTree{cwd: filepath.Join(tmp, relCwd), prefix: rev + ":"}
	if fi, err := os.Stat(filepath.Join(tmp, relDir)); err == nil && fi.IsDir() {
		t.path = filepath.Join(tmp, relDir)
	} else {
		fmt.Fprintf(e.stderr, "wlc diff: %s did not exist at %s: every job is new\n", dir, label)
	}
	if err := os.MkdirAll(t.cwd, 0o755); err != nil {
		cleanup()
		return oldTree{}, "", none, err
	}
	return t, label, cleanup, nil
}

// defaultBase is the merge base of HEAD with the default branch.
func (e *env) defaultBase() (rev, label string, err error) {
	var branch string
	if b, err := e.git("rev-parse", "--abbrev-ref", "origin/HEAD"); err == nil && b != "origin/HEAD" {
		branch = b
	} else {
		for _, b := range []string{"main", "master"} {
			if _, err := e.git("rev-parse", "--verify", "--quiet", "refs/heads/"+b); err == nil {
				branch = b
				break
			}
		}
	}
	if branch == "" {
		return "", "", usagef("no default branch to compare with (origin/HEAD, main, master); name a revision: wlc diff REV")
	}
	base, err := e.git("merge-base", "HEAD", branch)
	if err != nil {
		return "", "", usagef("HEAD and %s have no merge base (%v); name a revision: wlc diff REV", branch, err)
	}
	return base, "merge-base with " + branch, nil
}

// moduleRootRel is the directory (relative to top, slash form) of the
// CUE module holding dir: the nearest ancestor with a cue.mod, else dir.
func moduleRootRel(dir, top string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(filepath.Join(d, "cue.mod")); err == nil && fi.IsDir() {
			dir = d
			break
		}
		if d == top || filepath.Dir(d) == d {
			break
		}
	}
	rel, _ := filepath.Rel(top, dir)
	return filepath.ToSlash(rel)
}

// extract writes the tree of sub (relative to the top level) at commit
// into dst, through git archive.
func (e *env) extract(commit, sub, dst string) error {
	args := []string{"archive", "--format=tar", commit}
	if sub != "." {
		args = append(args, "--", sub)
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = e.cwd
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	terr := untar(out, dst)
	io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return terr
}

// untar writes a git archive's regular files and directories under dst;
// a path leaving dst is refused.
func untar(r io.Reader, dst string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean(h.Name)
		if !filepath.IsLocal(filepath.FromSlash(name)) {
			if name == "." {
				continue
			}
			return fmt.Errorf("archive entry %q leaves the directory", h.Name)
		}
		p := filepath.Join(dst, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			data, err := io.ReadAll(tr)
			if err != nil {
				return err
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				return err
			}
		}
		// Symlinks and the archive's global header are skipped: a
		// workloads package is plain files.
	}
}

// git runs git in the working directory and returns its trimmed output.
func (e *env) git(args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = e.cwd
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return "", fmt.Errorf("%s", msg)
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

func (e *env) abs(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(e.cwd, p)
}

// diffSelection is the names to compare: --workloads (a name on either
// side), --nightly (nightly on either side), else every job.
func diffSelection(o *diffOptions, s *sides) (func(plan.Workload) bool, error) {
	if o.workloads != "" && o.nightly {
		return nil, usagef("choose one of --workloads and --nightly")
	}
	if o.nightly {
		nightly := map[string]bool{}
		for _, j := range append(append([]plandiff.Job(nil), s.old...), s.new...) {
			nightly[j.Plan.Name] = nightly[j.Plan.Name] || j.Plan.Nightly
		}
		return func(p plan.Workload) bool { return nightly[p.Name] }, nil
	}
	if o.workloads == "" {
		return func(plan.Workload) bool { return true }, nil
	}
	want := map[string]bool{}
	for _, n := range strings.Split(o.workloads, ",") {
		if n = strings.TrimSpace(n); n != "" {
			want[n] = true
		}
	}
	var unknown []string
	for n := range want {
		if !s.has(n) {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		return nil, failf("wlc diff", "--workloads: no workload %s on either side", strings.Join(unknown, ", "))
	}
	return func(p plan.Workload) bool { return want[p.Name] }, nil
}

func (s *sides) has(name string) bool {
	for _, j := range append(append([]plandiff.Job(nil), s.old...), s.new...) {
		if j.Plan.Name == name {
			return true
		}
	}
	return false
}

func filterJobs(js []plandiff.Job, keep func(plan.Workload) bool) []plandiff.Job {
	var out []plandiff.Job
	for _, j := range js {
		if keep(j.Plan) {
			out = append(out, j)
		}
	}
	return out
}

// lowerAll lowers p alone through every backend that accepts it: its
// files by backend and path.
func lowerAll(p plan.Workload, opts backends.Options) map[[2]string][]byte {
	out := map[[2]string][]byte{}
	for _, b := range registry.All() {
		if acc, ok := b.(backends.Accepter); ok && acc.Accepts(p) != nil {
			continue
		}
		arts, err := b.Lower([]plan.Workload{p}, opts)
		if err != nil {
			// What the backend refuses, export refuses too; the diff
			// lists the files of the backends that take the job.
			continue
		}
		for _, a := range arts {
			out[[2]string{b.Name(), a.Path}] = a.Data
		}
	}
	return out
}

// jobBudget is a job's declared time limit: timeout_in_minutes, or a
// Slurm profile's time_limit when that is shorter.
func jobBudget(p plan.Workload) (int, string) {
	s, from := p.TimeoutMinutes*60, fmt.Sprintf("timeout_in_minutes %d", p.TimeoutMinutes)
	if c := p.Profile.Slurm; c != nil && p.Profile.Runtime == "slurm" {
		if t, err := slurm.TimeLimitSeconds(c.TimeLimit); err == nil && t < s {
			s, from = t, "slurm time_limit "+c.TimeLimit
		}
	}
	return s, from
}
