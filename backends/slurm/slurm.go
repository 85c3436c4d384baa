// Package slurm lowers workloads on Slurm profiles into one sbatch script
// each. The script is complete ahead of time: its #SBATCH header comes from
// the profile and the workload, every srun step (one vLLM or SGLang server per node,
// the benchmark client on the head node) is spelled out, so it can be read,
// diffed, linted and tried with `sbatch --test-only` before any GPU is
// allocated. Only sbatch is needed on the login node.
package slurm

import (
	_ "embed"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/backends/runner"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/schema"
)

//go:embed lib.sh
var lib string

// Backend is the slurm backend.
type Backend struct{}

// New returns the slurm backend.
func New() Backend { return Backend{} }

// Name is the --backend value.
func (Backend) Name() string { return "slurm" }

// Summary is the one line `wlc export --help` shows.
func (Backend) Summary() string {
	return "one sbatch script per workload (multi-node vLLM or SGLang, Pyxis containers)"
}

// Lower writes <workload>.sbatch for every workload.
func (Backend) Lower(ws []plan.Workload, _ backends.Options) ([]backends.Artifact, error) {
	var out []backends.Artifact
	var errs []string
	for _, w := range ws {
		s, err := Script(w)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		out = append(out, backends.Artifact{Path: w.Name + ".sbatch", Data: []byte(s), Mode: 0o755})
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return out, nil
}

var safeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// validate repeats the vet-time rules (and the schema's) on the plan, so a
// value that cannot be emitted safely is refused even when the plan did
// not come from a vetted package.
func validate(w plan.Workload) error {
	p := w.Profile
	if err := (Backend{}).Accepts(w); err != nil {
		return err
	}
	c := p.Slurm
	var msgs []string
	bad := func(format string, args ...any) { msgs = append(msgs, fmt.Sprintf(format, args...)) }
	if !safeName.MatchString(w.Name) || strings.Contains(w.Name, "..") {
		bad("the workload name %q cannot be a job name and file name", w.Name)
	}
	if w.Nodes < 1 || w.GPUsPerNode < 1 {
		bad("nodes %d × gpus_per_node %d: both must be at least 1", w.Nodes, w.GPUsPerNode)
	}
	if c.MaxNodes > 0 && w.Nodes > c.MaxNodes {
		bad("nodes is %d but profile %s allows at most %d (slurm.max_nodes)", w.Nodes, p.Name, c.MaxNodes)
	}
	if w.Hardware.GPUsPerNode > 0 && w.GPUsPerNode > w.Hardware.GPUsPerNode {
		bad("gpus_per_node is %d but a %s node has %d GPUs", w.GPUsPerNode, w.Hardware.Name, w.Hardware.GPUsPerNode)
	}
	if w.StartupTimeoutS < 1 {
		bad("startup_timeout_s must be at least 1")
	}
	for _, f := range CheckCluster(c, w.Hardware) {
		if !f.Warning {
			bad("profile %s: %s", p.Name, f)
		}
	}
	for _, f := range CheckWorkload(w.Nodes, w.GPUsPerNode, w.StartupTimeoutS, w.Hardware, c) {
		if !f.Warning {
			bad("%s", f)
		}
	}
	if c.Pyxis != nil && pyxisImage(w) == "" {
		bad("profile %s runs steps in Pyxis containers but no image is set (slurm.pyxis.image or the workload's image)", p.Name)
	}
	if w.Image.Skip != "" {
		bad("no image for this build: %s", w.Image.Skip)
	}
	for _, e := range w.Env {
		if err := plan.CheckEnvName(e.Name); err != nil {
			bad("environment variable name: %v", err)
		}
	}
	for _, s := range w.Secrets {
		if err := plan.CheckEnvName(s); err != nil {
			bad("secret name: %v", err)
		}
	}
	if len(w.Serve.Args) == 0 {
		bad("the server has no arguments (the model comes first)")
	}
	if w.Disagg != nil {
		msgs = append(msgs, validateDisagg(w)...)
	}
	if len(msgs) > 0 {
		return fmt.Errorf("workload %s: %s", w.Name, strings.Join(msgs, "; "))
	}
	return nil
}

// pyxisImage is the image Pyxis runs: the profile's override, else the
// workload image as the cluster pulls it. enroot reads REGISTRY#IMAGE, so a
// registry host in a Docker reference (nvcr.io/nvidia/x:tag) gets its '#';
// Docker Hub names and paths (squashfs files) stay as they are.
func pyxisImage(w plan.Workload) string {
	img := w.Profile.Slurm.Pyxis.Image
	if img == "" {
		img = w.Image.Pull
	}
	if img == "" {
		img = w.Image.Ref
	}
	if img == "" || strings.HasPrefix(img, "/") || strings.HasPrefix(img, ".") || strings.Contains(img, "#") || strings.Contains(img, "://") {
		return img
	}
	if host, rest, ok := strings.Cut(img, "/"); ok && (strings.ContainsAny(host, ".:") || host == "localhost") {
		return host + "#" + rest
	}
	return img
}

// gpuFlag is how the job, and each server step, asks for its GPUs.
func gpuFlag(w plan.Workload) string {
	if g := w.Profile.Slurm.Gres; g != "" {
		return "--gres=" + g
	}
	return "--gpus-per-node=" + strconv.Itoa(w.GPUsPerNode)
}

// noGPUFlag keeps GPUs from the client step. It must match the job's
// request style: Slurm 22.05 rejects --gres=none in a --gpus-per-node job
// ("Invalid Trackable RESource specification") and --gpus-per-node=0 is
// the way there.
func noGPUFlag(w plan.Workload) string {
	if w.Profile.Slurm.Gres != "" {
		return "--gres=none"
	}
	return "--gpus-per-node=0"
}

// Script renders the sbatch script of one workload: the #SBATCH header,
// the shared runner library (backends/runner) and the slurm runtime, then
// the run: hosts, server steps, health wait, client steps, teardown.
func Script(w plan.Workload) (string, error) {
	if err := validate(w); err != nil {
		return "", err
	}
	g := &gen{w: w, c: w.Profile.Slurm}
	g.header()
	pre, err := runner.Preamble(w, true)
	if err != nil {
		return "", fmt.Errorf("workload %s: %w", w.Name, err)
	}
	g.printf("%s", pre)
	g.printf("WLC_NODES=%d\n", w.Nodes)
	g.printf("if [ -z \"${SLURM_JOB_ID:-}\" ]; then\n")
	g.printf("  # Not in a job: create the directory sbatch writes the job log into, then submit this file.\n")
	g.printf("  mkdir -p %s\n", g.q(w.ResultsPath))
	g.printf("  exec sbatch \"$@\" \"$0\"\n")
	g.printf("fi\n\n")
	g.printf("%s\n", runner.Library(w)+runner.Extras(w))
	g.printf("WLC_REQUEUE=1 # submitted with --requeue: infrastructure failures requeue the job\n\n")
	if l := runner.EngineLibrary(w); l != "" {
		g.printf("%s\n", l)
	}
	ing, err := runner.Ingest(w)
	g.keep(err)
	g.printf("%s\n", ing)
	g.printf("%s\n", lib)
	if w.Disagg != nil {
		g.pdFunctions()
	} else {
		g.functions()
	}
	if w.Job != nil && w.Job.Where != "host" {
		g.jobFunction()
	}
	g.run()
	if g.err != nil {
		return "", fmt.Errorf("workload %s: %w", w.Name, g.err)
	}
	return g.b.String(), nil
}

type gen struct {
	w   plan.Workload
	c   *schema.SlurmCluster
	b   strings.Builder
	err error
}

func (g *gen) printf(format string, args ...any) { fmt.Fprintf(&g.b, format, args...) }

func (g *gen) keep(err error) {
	if err != nil && g.err == nil {
		g.err = err
	}
}

// q quotes a literal value.
func (g *gen) q(s string) string {
	out, err := runner.Quote(s)
	g.keep(err)
	return out
}

// args renders argv tokens for a client step, where {base_url} is
// WLC_BASE_URL and {results_dir} the shared results directory as the
// step sees it (WLC_BENCH_DIR, relative to its working directory).
func (g *gen) args(argv []string) []string {
	ws, err := runner.Words(argv, runner.ServerVars)
	g.keep(err)
	return ws
}

func (g *gen) header() {
	w, c := g.w, g.c
	results := w.ResultsPath
	cm := func(format string, args ...any) {
		g.printf("%s\n", strings.TrimRight("# "+runner.Comment(fmt.Sprintf(format, args...)), " "))
	}
	g.printf("#!/bin/bash\n")
	cm("%s.sbatch: %s benchmark job generated by wlc (slurm backend). Do not edit:", w.Name, runner.AEngine(w))
	cm("change %s and run `wlc export --backend slurm --workloads %s -o DIR`.", w.File, w.Name)
	cm("")
	cm("Model:    %s (%s)", w.Model, w.Precision)
	if w.Disagg != nil {
		cm("Server:   %s of %s, profile %s, prefill/decode disaggregated:", shape(w), w.Hardware.Name, w.Profile.Name)
		cm("          %s;", pdShape(w))
		cm("          one srun step per instance, the router on the first node")
	} else {
		cm("Server:   %s of %s, profile %s; tensor %d, pipeline %d, data %d%s", shape(w), w.Hardware.Name, w.Profile.Name,
			w.Serve.TensorParallelSize, w.Serve.PipelineParallelSize, w.Serve.DataParallelSize, map[bool]string{true: ", expert parallel"}[w.Serve.ExpertParallel])
	}
	if w.Nodes > 1 && w.Disagg == nil && w.Engine == schema.EngineSGLang {
		cm("          one srun step per node, SGLang's multi-node launch (--nnodes, --node-rank, --dist-init-addr on the head)")
	} else if w.Nodes > 1 && w.Disagg == nil {
		cm("          one srun step per node, vLLM native multiprocessing (rank 0 serves, the others --headless)")
	}
	for _, l := range runner.ShapeLines(w) {
		cm("%s", strings.Replace(strings.Replace(l, ":  ", ":", 1), "            ", "          ", 1))
	}
	if c.Pyxis != nil {
		cm("Image:    %s in Pyxis containers", pyxisImage(w))
	}
	cm("Results:  %s/ (job log slurm-<job>.out/.err, server*.log, results)", results)
	cm("")
	cm("Submit from the checkout root (sbatch needs %s/ to exist for the job log):", results)
	cm("  bash %s.sbatch [sbatch options]    # creates it, then runs sbatch", w.Name)
	cm("  mkdir -p %s && sbatch %s.sbatch", results, w.Name)
	if len(w.Secrets) > 0 {
		cm("Secrets pass by name from the submitting environment (sbatch exports it): %s", strings.Join(w.Secrets, ", "))
	}
	cm("Optional: WLC_PORT, WLC_POLL_S (default 5), WLC_STOP_TIMEOUT_S (default 8).")
	line := func(opt string) { g.printf("#SBATCH %s\n", opt) }
	line("--job-name=" + w.Name)
	line("--nodes=" + strconv.Itoa(w.Nodes))
	line("--ntasks-per-node=1")
	line(gpuFlag(w))
	for _, o := range []struct{ name, v string }{
		{"partition", c.Partition}, {"account", c.Account}, {"qos", c.QOS}, {"reservation", c.Reservation},
	} {
		if o.v != "" {
			line("--" + o.name + "=" + o.v)
		}
	}
	line("--time=" + c.TimeLimit)
	if c.Exclusive {
		line("--exclusive")
	}
	// A job that failed for the infrastructure requeues itself
	// (wlc_requeue); a requeued job's log goes on after the first run's.
	line("--requeue")
	line("--open-mode=append")
	line("--output=" + results + "/slurm-%j.out")
	line("--error=" + results + "/slurm-%j.err")
	for _, a := range c.ExtraSbatchArgs {
		line(a)
	}
}

func shape(w plan.Workload) string {
	if w.Nodes == 1 {
		return fmt.Sprintf("1 node × %d GPUs", w.GPUsPerNode)
	}
	return fmt.Sprintf("%d nodes × %d GPUs", w.Nodes, w.GPUsPerNode)
}

// common are the srun options every step shares: MPI plugin, container,
// extra srun args.
func (g *gen) common() []string {
	c := g.c
	var out []string
	if c.MPI != "" {
		out = append(out, g.q("--mpi="+c.MPI))
	}
	out = append(out, g.pyxisFlags()...)
	for _, a := range c.ExtraSrunArgs {
		out = append(out, g.q(a))
	}
	return out
}

func (g *gen) functions() {
	w := g.w
	common := g.common()

	g.printf("# wlc_server_start: one server step per node, each pinned to its host,\n")
	g.printf("# stdin closed, output in the results directory.\n")
	g.printf("wlc_server_start() {\n")
	if w.Sweep != nil {
		g.printf("  # A sweep starts servers per backend: forget the last one's steps.\n")
		g.printf("  WLC_SERVER_PIDS=()\n  WLC_DEAD_RANK=''\n  WLC_DEAD_RC=0\n")
	}
	if w.Nodes == 1 {
		g.printf("  wlc_log \"starting %s on $WLC_HEAD\"\n", strings.Join(w.Serve.Command, " "))
	} else {
		g.printf("  wlc_log \"starting %s on %d nodes (head $WLC_HEAD)\"\n", strings.Join(w.Serve.Command, " "), w.Nodes)
	}
	serve, err := runner.Words(w.Serve.Args, runner.NoVars)
	g.keep(err)
	for r := 0; r < w.Nodes; r++ {
		host := `"$WLC_HEAD"`
		if r > 0 {
			host = fmt.Sprintf(`"${WLC_HOSTS[%d]}"`, r)
		}
		step := [][]string{{"srun", "--nodes=1", "--ntasks=1", "--nodelist=" + host, gpuFlag(w)}}
		for _, o := range common {
			step = append(step, []string{o})
		}
		// The workload's environment is the server's (and the clients',
		// wlc_client), never the batch shell's: steps inherit that one.
		step = append(step, []string{"env", `"${WLC_ENV[@]}"`}, g.args(w.Serve.Command))
		step = append(step, runner.Group(serve)...)
		if x := runner.ServeExtra(w); x != nil {
			step = append(step, x)
		}
		if r == 0 {
			step = append(step, []string{"--host", "0.0.0.0"}, []string{"--port", `"$WLC_PORT"`})
		}
		if w.Nodes > 1 && w.Engine == schema.EngineSGLang {
			// SGLang's ranks meet at --dist-init-addr on the head; only
			// rank 0 serves HTTP.
			step = append(step,
				[]string{"--nnodes", strconv.Itoa(w.Nodes)},
				[]string{"--node-rank", strconv.Itoa(r)},
				[]string{"--dist-init-addr", `"$WLC_HEAD:$WLC_DIST_PORT"`})
		} else if w.Nodes > 1 {
			step = append(step,
				[]string{"--distributed-executor-backend", "mp"},
				[]string{"--nnodes", strconv.Itoa(w.Nodes)},
				[]string{"--node-rank", strconv.Itoa(r)},
				[]string{"--master-addr", `"$WLC_HEAD"`})
			if r > 0 {
				step = append(step, []string{"--headless"})
			}
		}
		step = append(step, []string{"</dev/null", fmt.Sprintf(`>"$(wlc_server_log %d)"`, r), "2>&1", "&"})
		g.printf("  %s\n", runner.Continued(step, "    "))
		g.printf("  WLC_SERVER_PIDS[%d]=$!\n", r)
	}
	g.printf("}\n\n")
	g.client()
}

// jobFunction defines wlc_job_run for a custom job: one step on the head
// node with the node's GPUs, in the server's container, DIR made first in
// the shared results directory.
func (g *gen) jobFunction() {
	step := [][]string{{"srun", "--nodes=1", "--ntasks=1", `--nodelist="$WLC_HEAD"`, gpuFlag(g.w)}}
	for _, o := range g.common() {
		step = append(step, []string{o})
	}
	step = append(step, []string{`"$@"`, "</dev/null"})
	g.printf("\n# wlc_job_run DIR CMD...: the custom job as a step on the head node with its\n")
	g.printf("# GPUs, in the server's container; DIR is made first in the results.\n")
	g.printf("wlc_job_run() {\n")
	g.printf("  mkdir -p \"$WLC_BENCH_DIR/$1\" || return\n")
	g.printf("  shift\n")
	g.printf("  wlc_log \"running the custom job on $WLC_HEAD\"\n")
	g.printf("  %s\n", runner.Continued(step, "    "))
	g.printf("}\n")
}

// client defines wlc_in_server, the client steps' runner.
func (g *gen) client() {
	w := g.w
	common := g.common()
	g.printf("# wlc_in_server CMD...: CMD as a step on the head node beside rank 0, in the\n")
	g.printf("# same container, without GPUs, stdin closed (srun would read the\n")
	g.printf("# script's stdin); it fails as soon as a server step ends.\n")
	g.printf("wlc_in_server() {\n")
	client := [][]string{{"srun", "--overlap", "--nodes=1", "--ntasks=1", `--nodelist="$WLC_HEAD"`, noGPUFlag(w)}}
	for _, o := range common {
		client = append(client, []string{o})
	}
	if g.c.Pyxis != nil {
		// Named, so the client steps share one container instead of
		// unpacking the image for each.
		client = append(client, []string{"--container-name=wlc-client"})
	}
	client = append(client, []string{`"$@"`, "</dev/null", "&"})
	g.printf("  %s\n", runner.Continued(client, "    "))
	g.printf("  wlc_watch $!\n")
	g.printf("}\n")
	g.printf("\n# wlc_beside_server CMD...: CMD as a step on the head node where the clients\n")
	g.printf("# run (the same container), beside the server steps; its status is CMD's.\n")
	g.printf("wlc_beside_server() {\n")
	beside := append([][]string{}, client[:len(client)-1]...)
	beside = append(beside, []string{`"$@"`, "</dev/null"})
	g.printf("  %s\n", runner.Continued(beside, "    "))
	g.printf("}\n")
}

// preflightExtra are the server options the slurm runtime adds: the
// multi-node and disaggregation flags, and every PD instance's own.
func (g *gen) preflightExtra() []string {
	w := g.w
	var out []string
	if w.Nodes > 1 && w.Disagg == nil {
		if w.Engine == schema.EngineSGLang {
			out = append(out, "--nnodes", "--node-rank", "--dist-init-addr")
		} else {
			out = append(out, "--distributed-executor-backend", "--nnodes", "--node-rank", "--master-addr", "--headless")
		}
	}
	if d := w.Disagg; d != nil {
		for _, in := range d.Instances {
			out = append(out, runner.ServeOptions(plan.Workload{Serve: plan.Serve{Args: in.Args}})...)
			if in.DataParallelSize > 1 {
				out = append(out, "--data-parallel-size-local", "--data-parallel-address", "--data-parallel-rpc-port", "--data-parallel-hybrid-lb", "--data-parallel-start-rank")
			}
		}
	}
	return out
}

func (g *gen) pyxisFlags() []string {
	p := g.c.Pyxis
	if p == nil {
		return nil
	}
	out := []string{g.q("--container-image=" + pyxisImage(g.w))}
	var mounts []string
	for _, m := range p.Mounts {
		s := m.Source + ":" + m.Target
		if m.ReadOnly {
			s += ":ro"
		}
		mounts = append(mounts, s)
	}
	if p.Workdir == "" {
		if len(mounts) > 0 {
			out = append(out, g.q("--container-mounts="+strings.Join(mounts, ",")+",")+`"$WLC_WORKDIR:$WLC_WORKDIR"`)
		} else {
			out = append(out, `--container-mounts="$WLC_WORKDIR:$WLC_WORKDIR"`)
		}
		out = append(out, `--container-workdir="$WLC_WORKDIR"`)
	} else {
		if len(mounts) > 0 {
			out = append(out, g.q("--container-mounts="+strings.Join(mounts, ",")))
		}
		out = append(out, g.q("--container-workdir="+p.Workdir))
	}
	if p.RemapRoot {
		out = append(out, "--container-remap-root")
	} else {
		out = append(out, "--no-container-remap-root")
	}
	return out
}

func (g *gen) run() {
	w := g.w
	g.printf("\n# ---- Run ----\n\n")
	if w.Job != nil {
		g.printf("wlc_require scontrol srun\n")
	} else {
		g.printf("wlc_require curl scontrol srun\n")
	}
	if len(w.Secrets) > 0 {
		g.printf("wlc_warn_unset %s\n", strings.Join(w.Secrets, " "))
	}
	g.printf("wlc_hosts\n")
	g.printf("wlc_init\n")
	g.printf("# Client steps write here, relative to their working directory: the\n")
	g.printf("# submission directory%s.\n", map[bool]string{true: " (the container workdir mounts it)"}[g.c.Pyxis != nil])
	g.printf("WLC_BENCH_DIR=%s\n", g.q(w.ResultsPath))
	if p := g.c.Pyxis; p != nil && p.Workdir == "" {
		g.printf("# No pyxis.workdir: the submission directory is mounted at its own path\n")
		g.printf("# and is the containers' working directory, so results land here.\n")
		g.printf("WLC_WORKDIR=$PWD\n")
		g.printf("case $WLC_WORKDIR in *[,:]*)\n")
		g.printf("  wlc_log \"Pyxis cannot mount $WLC_WORKDIR (it has ',' or ':'); submit from another directory\"\n")
		g.printf("  exit 1 ;;\n")
		g.printf("esac\n")
	}
	if len(w.Tools) > 0 {
		g.printf("%s", runner.ToolsVenv(runner.Runtime{ToolsVenv: `".wlc-tools-$WLC_RUN_ID" # in the clients' working directory`}))
	}
	if w.Job == nil {
		pf, err := runner.Preflight(w, g.preflightExtra())
		g.keep(err)
		g.printf("%s", pf)
	}
	steps, err := runner.Steps(w)
	g.keep(err)
	if w.Disagg != nil {
		g.pdStart()
		g.printf("%s", steps)
	} else {
		if w.Nodes > 1 && w.Engine == schema.EngineSGLang {
			g.printf("# SGLang's ranks rendezvous on the head node at this port.\n")
			g.printf("WLC_DIST_PORT=${WLC_DIST_PORT:-$((WLC_PORT + 1))}\n")
		}
		serve, err := runner.Serve(w, steps)
		g.keep(err)
		g.printf("%s", serve)
	}
	g.printf("\nexit \"$WLC_STATUS\"\n")
}
