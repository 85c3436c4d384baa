// Package buildkite lowers resolved workloads into one Buildkite pipeline
// for a dynamic `buildkite-agent pipeline upload`, with perf-eval's per-step
// semantics (perf-eval.md §3.3). Each step runs its workload's runner
// script (docker, native or Slurm, produced by the runner backends), which
// the export carries beside the pipeline and the upload step publishes as
// artifacts (scripts.go): the step a person opens in Buildkite reads as
// "download this script, check its sha256, run it".
//
// Interpolation. buildkite-agent interpolates `$` in every string of an
// uploaded pipeline with the *uploader's* environment, and agent v3.78.0
// fails the whole upload on bash-only forms such as `${#A[@]}` and
// mishandles nested `$${A:-$$B}` (internal/testrig/bktest). The scripts
// never pass through it (they are artifacts), and a step's command holds
// no `$` at all, which Lower asserts. The other strings of a step (env
// values, pod spec) are escaped `$` -> `$$`, and a value with a `$` nested
// inside `${...}`, which no escaping carries through agent v3.78.0
// unchanged, is refused.
package buildkite

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/buildkite/go-pipeline"
	"github.com/buildkite/go-pipeline/ordered"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/backends/runner"
	"github.com/wlcdev/wlc/internal/par"
	"github.com/wlcdev/wlc/internal/plan"
)

// PipelineFile is the artifact's name when the pipeline fits one upload.
const PipelineFile = "pipeline.yml"

// MaxJobsPerUpload is how many jobs Buildkite lets one `pipeline upload`
// create ("exceeds your organization limit of 500"; its docs: "Configuration
// files with over 500 steps must be split into multiple files"). A larger
// selection is lowered into several pipelines, pipeline-1.yml, …, each
// uploaded by its own `buildkite-agent pipeline upload`. Every step wlc
// writes is one job (no parallelism, no matrix), so steps count as jobs.
const MaxJobsPerUpload = 500

// JobsPerUploadVar, set at export time, replaces MaxJobsPerUpload for an
// organization whose limit Buildkite changed.
const JobsPerUploadVar = "WLC_JOBS_PER_UPLOAD"

// Runner names: the keys of the map New takes. A profile's runtime picks
// the runner whose script its step runs.
const (
	RunnerDocker = "docker" // runtime docker: `docker run` on the agent's GPU host
	RunnerNative = "native" // runtime k8s: `vllm serve` inside the plugin's pod
	RunnerSlurm  = "slurm"  // runtime slurm: an sbatch script submitted from the login node
)

// runnerFor maps a profile runtime to its runner.
var runnerFor = map[string]string{
	"docker": RunnerDocker,
	"k8s":    RunnerNative,
	"slurm":  RunnerSlurm,
}

// Backend is the buildkite backend.
type Backend struct {
	runners map[string]backends.Backend
}

// New returns the backend; runners maps RunnerDocker, RunnerNative and
// RunnerSlurm to the backends producing each workload's script. A missing
// runner makes the workloads that need it an export error.
func New(runners map[string]backends.Backend) *Backend {
	m := make(map[string]backends.Backend, len(runners))
	for k, v := range runners {
		if v != nil {
			m[k] = v
		}
	}
	return &Backend{runners: m}
}

// Name implements backends.Backend.
func (*Backend) Name() string { return "buildkite" }

// Summary implements backends.Backend.
func (*Backend) Summary() string {
	return "a Buildkite pipeline, one step per workload (over 500, several), the scripts its steps download and upload.sh, which the upload step runs (-o DIR)"
}

// NightlyByDefault makes an unselected export the nightly set, as
// perf-eval's generator did.
func (*Backend) NightlyByDefault() bool { return true }

// Lower implements backends.Backend: one command step per workload, in the
// order given, in one pipeline (or, over the jobs-per-upload limit,
// several), then the scripts the steps download and upload.sh. Every
// workload that cannot be lowered is reported.
func (b *Backend) Lower(ws []plan.Workload, opts backends.Options) ([]backends.Artifact, error) {
	parts, steps, err := b.pipelines(ws, opts)
	if err != nil {
		return nil, err
	}
	// One upload after the other: each writes its steps on every CPU
	// (yamlWriter.pipeline).
	arts := make([]backends.Artifact, 0, len(parts)+len(steps)+3)
	names := make([]string, len(parts))
	for i, pt := range parts {
		data, err := encode(pt.header, pt.p)
		if err != nil {
			return nil, err
		}
		arts = append(arts, backends.Artifact{Path: pt.path, Data: data, Mode: 0o644})
		names[i] = pt.path
	}
	scripts, err := files(steps)
	if err != nil {
		return nil, err
	}
	arts = append(arts, scripts...)
	key, _ := uploadStepKey(opts.Env) // checked by pipelines
	return append(arts, backends.Artifact{Path: UploadFile, Data: uploadScript(key, names), Mode: 0o644}), nil
}

// part is one upload: its file, header comment and pipeline.
type part struct {
	path, header string
	p            *pipeline.Pipeline
}

// pipelines builds the uploads: one pipeline, or over the jobs-per-upload
// limit several; and the steps, whose files the export carries.
func (b *Backend) pipelines(ws []plan.Workload, opts backends.Options) ([]part, []*pendingStep, error) {
	if len(ws) == 0 {
		return nil, nil, errors.New("no workloads to put in the pipeline")
	}
	var errs []error
	key, err := uploadStepKey(opts.Env)
	if err != nil {
		errs = append(errs, err)
	}
	limit, err := jobsPerUpload(opts.Env)
	if err != nil {
		errs = append(errs, err)
	}
	// Each step is its workload's alone: built on every CPU, gathered in
	// order.
	built := make([]*pendingStep, len(ws))
	failed := make([]error, len(ws))
	par.Do(len(ws), func(i int) { built[i], failed[i] = b.step(ws[i], opts, key) })
	var steps []*pendingStep
	for i, w := range ws {
		if failed[i] != nil {
			errs = append(errs, fmt.Errorf("%s: %w", w.Name, failed[i]))
			continue
		}
		steps = append(steps, built[i])
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	chunks := splitSteps(steps, limit)
	parts := make([]part, len(chunks))
	first := 1
	for i, c := range chunks {
		p := &pipeline.Pipeline{Steps: make(pipeline.Steps, len(c))}
		for j, s := range c {
			p.Steps[j] = s.step
		}
		parts[i] = part{PipelineFile, "# Generated by wlc export --backend buildkite; upload it with " + UploadFile + " beside it, which first uploads the scripts its steps download.\n", p}
		if len(chunks) > 1 {
			parts[i].path = PartFile(i, len(chunks))
			parts[i].header = fmt.Sprintf("# Generated by wlc export --backend buildkite: pipeline %d of %d, steps %d-%d of %d.\n"+
				"# Buildkite creates at most %d jobs per upload: %s beside it uploads the scripts, then each of the %d files with its own buildkite-agent pipeline upload.\n",
				i+1, len(chunks), first, first+len(c)-1, len(steps), limit, UploadFile, len(chunks))
		}
		first += len(c)
	}
	return parts, steps, nil
}

// PartFile is the name of pipeline i (from 0) of n: pipeline-1.yml, …,
// zero-padded so that the files sort in upload order.
func PartFile(i, n int) string {
	return fmt.Sprintf("pipeline-%0*d.yml", len(strconv.Itoa(n)), i+1)
}

// jobsPerUpload is the organization's jobs-per-upload limit.
func jobsPerUpload(env map[string]string) (int, error) {
	v := strings.TrimSpace(env[JobsPerUploadVar])
	if v == "" {
		return MaxJobsPerUpload, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s=%q: want a positive number of jobs per pipeline upload (Buildkite's default limit is %d)", JobsPerUploadVar, v, MaxJobsPerUpload)
	}
	return n, nil
}

// splitSteps cuts steps, in order, into the fewest parts of at most limit
// steps, sizes differing by at most one (1,200 at 500: 400, 400, 400).
func splitSteps[S any](steps []S, limit int) [][]S {
	k := (len(steps) + limit - 1) / limit
	parts := make([][]S, 0, k)
	for i := range k {
		lo, hi := i*len(steps)/k, (i+1)*len(steps)/k
		parts = append(parts, steps[lo:hi])
	}
	return parts
}

// encode marshals one pipeline after its header comment: written directly
// (emit.go), else by yaml.v3, with the same bytes either way.
func encode(header string, p *pipeline.Pipeline) ([]byte, error) {
	// Sized for the commands (indented once more) and each step's
	// fields, so the pipeline is not copied as it grows.
	size := 64 << 10
	for _, st := range p.Steps {
		if cs, ok := st.(*pipeline.CommandStep); ok {
			size += len(cs.Command) + len(cs.Command)/8 + 1024
		}
	}
	w := newYAMLWriter(size)
	switch err := w.pipeline(header, p); {
	case err == nil:
		return w.b, nil
	case errors.Is(err, errSlowPath):
		return encodeYAMLv3(header, p)
	default:
		return nil, fmt.Errorf("marshal pipeline: %w", err)
	}
}

// pendingStep is a command step and the files its command downloads.
type pendingStep struct {
	w      plan.Workload
	runner string // the runner backend's name
	step   *pipeline.CommandStep
	files  []file // the runner's script first
	// runtime is the artifact path of the shared runtime the script
	// sources, "" when it stands alone.
	runtime string
	run     string // the command's last line
}

// step builds one workload's command step; key is the upload step's.
func (b *Backend) step(w plan.Workload, opts backends.Options, key string) (*pendingStep, error) {
	prof := w.Profile
	runnerName, ok := runnerFor[prof.Runtime]
	if !ok {
		return nil, fmt.Errorf("profile %s: runtime %q has no Buildkite step shape (want docker, k8s or slurm)", prof.Name, prof.Runtime)
	}
	runner := b.runners[runnerName]
	if runner == nil {
		return nil, fmt.Errorf("profile %s (runtime %s) runs the %s runner's script, but this wlc has no %s backend wired into buildkite (available: %s)",
			prof.Name, prof.Runtime, runnerName, runnerName, b.available())
	}
	scriptName, script, rt, err := runnerScript(runner, runnerName, w, opts)
	if err != nil {
		return nil, err
	}

	queue := prof.Queue
	if v := strings.TrimSpace(opts.Env[envName(prof.Name, "QUEUE")]); v != "" {
		queue = v
	}
	agents := ordered.NewMap[string, any](1 + len(prof.AgentTags))
	agents.Set("queue", queue)
	for _, k := range slices.Sorted(maps.Keys(prof.AgentTags)) {
		if k == "queue" {
			return nil, fmt.Errorf("profile %s: agent_tags must not set queue (use queue or %s)", prof.Name, envName(prof.Name, "QUEUE"))
		}
		agents.Set(k, prof.AgentTags[k])
	}

	s := &pipeline.CommandStep{
		Label: emoji(w) + " " + w.RunName,
		RemainingFields: map[string]any{
			"agents":             agents,
			"timeout_in_minutes": w.TimeoutMinutes,
			"artifact_paths":     []string{w.ResultsPath + "/**/*"},
			"retry":              retry(),
		},
	}
	if w.TimeoutMinutes < 1 {
		return nil, fmt.Errorf("timeout_in_minutes is %d; Buildkite needs at least 1", w.TimeoutMinutes)
	}

	ps := &pendingStep{w: w, runner: runner.Name(), step: s}
	switch runnerName {
	case RunnerSlurm:
		ps.slurm(scriptName, script)
		// One Slurm job per login-node queue at a time: the router and
		// server control ports on the login node are fixed (perf-eval #74).
		s.RemainingFields["concurrency"] = 1
		s.RemainingFields["concurrency_group"] = "wlc/" + queue
		s.RemainingFields["concurrency_method"] = "eager"
	default:
		ps.direct(scriptName, script, rt)
	}

	if w.Image.Skip != "" {
		// perf-eval #63: the build provides no image for this platform; keep
		// the step visible but skipped, without the pod that would pull it.
		s.RemainingFields["skip"] = w.Image.Skip
	} else if prof.Runtime == "k8s" {
		pl, err := k8sPlugin(w, opts)
		if err != nil {
			return nil, err
		}
		s.Plugins = pipeline.Plugins{pl}
	}

	if env := stepEnv(w, opts); len(env) > 0 {
		s.Env = env
	}
	if err := escapeStep(s); err != nil {
		return nil, err
	}
	s.Command = ps.command(key)
	if strings.Contains(s.Command, "$") {
		// Cannot happen (names, hex digests and fixed text); guards the
		// design.
		return nil, errors.New("internal error: the step command contains a $")
	}
	return ps, nil
}

// retry is the steps' automatic retry: twice for each infrastructure
// exit status of the job scripts (runner.Exits), never for the workload's.
func retry() map[string]any {
	var rules []any
	for _, s := range runner.InfraStatuses() {
		rules = append(rules, map[string]any{"exit_status": s, "limit": 2})
	}
	return map[string]any{"automatic": rules}
}

func (b *Backend) available() string {
	if len(b.runners) == 0 {
		return "none"
	}
	return strings.Join(slices.Sorted(maps.Keys(b.runners)), ", ")
}

// runtimeDir is where a split script finds its runtime: helpers/ beside
// its own scripts/ directory, as the step downloads them.
const runtimeDir = "../" + helpersDir

// runnerScript lowers w alone through its runner and returns the
// script's file name and bytes, and the shared runtime it sources when the
// runner splits its scripts (runner.Splitter) and the step runs it in
// place. A Slurm step's sbatch script stays whole: sbatch copies the
// script alone to the compute node's spool directory, where no file
// beside it exists.
func runnerScript(r backends.Backend, runnerName string, w plan.Workload, opts backends.Options) (string, []byte, *runner.SharedRuntime, error) {
	if sp, ok := r.(runner.Splitter); ok && runnerName != RunnerSlurm {
		s, err := sp.Split(w, runtimeDir)
		if err != nil {
			return "", nil, nil, fmt.Errorf("%s runner: %w", r.Name(), err)
		}
		return w.Name + ".sh", s.Job, s.Runtime, nil
	}
	name, data, err := wholeScript(r, w, opts)
	return name, data, nil, err
}

// wholeScript lowers w alone through its runner and returns the
// script's file name and bytes.
func wholeScript(r backends.Backend, w plan.Workload, opts backends.Options) (string, []byte, error) {
	arts, err := r.Lower([]plan.Workload{w}, opts)
	if err != nil {
		return "", nil, fmt.Errorf("%s runner: %w", r.Name(), err)
	}
	if len(arts) != 1 {
		return "", nil, fmt.Errorf("%s runner produced %d files for one workload; a Buildkite step runs exactly one script", r.Name(), len(arts))
	}
	if len(arts[0].Data) == 0 {
		return "", nil, fmt.Errorf("%s runner produced an empty script", r.Name())
	}
	if name := arts[0].Path; name != w.Name+".sh" && name != w.Name+".sbatch" {
		// The name becomes an artifact path and a line of the step's
		// sha256 check: only the workload's name (plan.CheckName) may vary.
		return "", nil, fmt.Errorf("%s runner named its script %q; want %s.sh or %s.sbatch", r.Name(), name, w.Name, w.Name)
	}
	return arts[0].Path, arts[0].Data, nil
}

// passthrough are the build variables copied into every step's env when
// set at export time (perf-eval §3.3 item 8), so the job and its result
// tags see the build's inputs.
var passthrough = []string{"BENCH_ONLY", "SGLANG_IMAGE", "VLLM_COMMIT", "VLLM_IMAGE", "VLLM_IMAGE_CUDA", "VLLM_IMAGE_ROCM", "VLLM_IMAGE_XPU"}

func stepEnv(w plan.Workload, opts backends.Options) map[string]string {
	env := map[string]string{}
	for _, k := range passthrough {
		if v := strings.TrimSpace(opts.Env[k]); v != "" {
			env[k] = v
		}
	}
	if w.BenchOnly {
		env["BENCH_ONLY"] = "1"
	}
	// The job's identity, for what reads the step rather than its script
	// (the runner's script, lowered first, fails on a plan it cannot hash).
	if h, err := plan.JobHash(w); err == nil {
		env["WLC_JOB_HASH"] = h
	}
	return env
}

// envName is the override variable of a profile: the profile name upper-
// cased, every character outside [A-Z0-9_] replaced by _, then _suffix
// (B200 -> B200_QUEUE, perf-eval's {GPU}_QUEUE).
func envName(profile, suffix string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(profile) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String() + "_" + suffix
}

// emojis are perf-eval's label emoji per GPU (profile name first, then the
// hardware name); anything else gets :buildkite:.
var emojis = map[string]string{
	"A100":        ":a100:",
	"H100":        ":h100:",
	"H200":        ":h200:",
	"B200":        ":b200:",
	"B300":        ":b300:",
	"GB200":       ":gb200:",
	"GB300":       ":b300:",
	"GB300_SLURM": ":gb300:",
	"MI300X":      ":mi300x:",
	"MI325X":      ":mi325x:",
	"MI355X":      ":mi355x:",
	"XPU":         ":intel:",
}

func emoji(w plan.Workload) string {
	if e, ok := emojis[w.Profile.Name]; ok {
		return e
	}
	if e, ok := emojis[w.Hardware.Name]; ok {
		return e
	}
	return ":buildkite:"
}

// shellWord quotes s as one bash word (unchanged when nothing in it is
// special). A value that cannot be quoted (a NUL byte) never gets here:
// plan.CheckName refuses it first; an empty quoted word keeps the command
// inert if it did.
func shellWord(s string) string {
	q, err := runner.Quote(s)
	if err != nil {
		return "''"
	}
	return q
}
