package runner

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/results/dashboard"
	"github.com/wlcdev/wlc/schema"
)

//go:embed lib.sh
var lib string

//go:embed results.py
var resultsPy string

//go:embed sglang.sh
var sglangLib string

// Engine facts the scripts need, by plan.Workload.Engine.
type engine struct {
	name   string // for people: "vLLM"
	a      string // the name with its article: "a vLLM"
	client string // the benchmark client, for the header
	bench  string // the lib.sh function one bench run calls
	lib    string // shell functions the client needs beyond lib.sh
	// preflight is preflight.sh's ENGINE: how the image is asked.
	preflight string
}

var engines = map[string]engine{
	schema.EngineVLLM:   {name: "vLLM", a: "a vLLM", client: "vllm bench serve", bench: "wlc_bench", preflight: "vllm"},
	schema.EngineSGLang: {name: "SGLang", a: "an SGLang", client: "python3 -m sglang.bench_serving", bench: "wlc_sglang_bench", lib: sglangLib, preflight: "sglang"},
}

// engineOf is w's engine; a plan without one is vLLM's (as the schema's
// default).
func engineOf(w plan.Workload) engine {
	if e, ok := engines[w.Engine]; ok {
		return e
	}
	return engines[schema.EngineVLLM]
}

// EngineName is the engine's name for people ("vLLM", "SGLang").
func EngineName(w plan.Workload) string { return engineOf(w).name }

// AEngine is the engine's name with its article ("a vLLM", "an SGLang"),
// for the scripts' first line.
func AEngine(w plan.Workload) string { return engineOf(w).a }

// EngineLibrary is the shell the engine's client needs beyond Library
// (empty for vLLM, whose client wlc_bench is in lib.sh).
func EngineLibrary(w plan.Workload) string { return engineOf(w).lib }

// BenchFunc is the lib.sh function one bench run of w calls (wlc_bench,
// wlc_sglang_bench), with the arguments benchStep writes.
func BenchFunc(w plan.Workload) string { return engineOf(w).bench }

//go:embed ingest.py
var ingestPy string

//go:embed tools.sh
var toolsSh string

//go:embed preflight.sh
var preflightSh string

//go:embed bfcl.py
var bfclPy string

//go:embed speed_bench.py
var speedBenchPy string

//go:embed provenance.sh
var provenanceSh string

// Runtime is what differs between the places a server runs. Its Functions
// define the contract functions lib.sh calls (see the package doc); the
// rest is for the header and the run section.
type Runtime struct {
	// Backend is the export backend's name, for the header.
	Backend string
	// Where says, for the header, where the script runs and how the
	// server starts (one line).
	Where string
	// Tools are the commands the script checks for before anything
	// starts (curl is always added).
	Tools []string
	// Env documents the variables the runtime reads: {name, meaning}.
	Env [][2]string
	// Globals is shell text at top level before the functions (the
	// runtime's constants and state variables).
	Globals string
	// Functions defines wlc_server_start, wlc_server_alive,
	// wlc_server_exit_code, wlc_server_log_tail, wlc_server_stop,
	// wlc_in_server and wlc_fetch_result. What of them is the same for
	// every workload may be in Shared instead.
	Functions string
	// Shared defines the contract functions whose text is the same for
	// every workload of the runtime: they go in the shared runtime, which
	// a Buildkite step downloads once for many workloads (Split).
	Shared string
	// Prepare is shell text run after wlc_init and before
	// wlc_server_start (e.g. naming the container, pulling the image); it
	// must set WLC_BENCH_DIR.
	Prepare string
	// Job defines wlc_job_run DIR CMD...: CMD where the server would
	// run, in the image with every reserved GPU, DIR (under
	// $WLC_BENCH_DIR) made first. Empty: the backend runs no custom job.
	Job string
	// ToolsVenv is the shell expression of the client tools' virtual
	// environment where the clients run, unless WLC_TOOLS_VENV names one
	// (then it is kept): a directory of this job's own.
	ToolsVenv string
	// ToolsVenvKept says the job leaves its own venv (docker: it goes
	// with the container); otherwise the EXIT trap removes it.
	ToolsVenvKept bool
	// PreflightAtStart says wlc_server_start runs the preflight itself,
	// as the server container's first step (docker: the image exists only
	// in the container). Otherwise Run calls wlc_preflight first, which
	// the runtime's wlc_beside_server runs.
	PreflightAtStart bool
}

// Script renders the whole job script for w: the workload's head (Header,
// Preamble), the shared runtime (sharedText), then its tail (the
// workload's settings, the runtime's globals and functions, Run). Split
// ships the same three parts as two files.
func Script(w plan.Workload, rt Runtime) ([]byte, error) {
	l, err := layoutOf(w, rt)
	if err != nil {
		return nil, err
	}
	// A script is ~50 KB, mostly the shared runtime: its parts are copied
	// once into a buffer of their total size (growing a buffer through
	// them showed in export's profile).
	return concat(l.head, l.shared.text, l.tail), nil
}

// Header is the script's opening comment: what runs, on what, from which
// image and why, and the variables a human can set.
func Header(w plan.Workload, rt Runtime) string {
	b := make([]byte, 0, 2048)
	c := func(format string, args ...any) { b = appendCommentLines(b, fmt.Sprintf(format, args...)) }
	b = append(b, "#!/usr/bin/env bash\n"...)
	c("%s.sh: %s benchmark job generated by wlc (%s backend). Do not edit:", w.Name, AEngine(w), rt.Backend)
	c("change %s and run `wlc export --backend %s --workloads %s -o DIR`.", w.File, rt.Backend, w.Name)
	c("")
	if w.Description != "" {
		c("%s", strings.TrimSpace(w.Description))
		c("")
	}
	c("Model:      %s", w.Model)
	hw := w.Hardware
	c("Hardware:   %d of %d %s GPUs on one node (%s %s, %s); profile %s, runtime %s",
		w.GPUsPerNode, hw.GPUsPerNode, hw.Name, hw.Vendor, hw.Architecture, hw.Generation, w.Profile.Name, w.Profile.Runtime)
	if w.Job == nil {
		c("Parallel:   tensor %d, pipeline %d, data %d%s", w.Serve.TensorParallelSize, w.Serve.PipelineParallelSize, w.Serve.DataParallelSize, map[bool]string{true: ", expert parallel"}[w.Serve.ExpertParallel])
	}
	prec := w.Precision
	if w.PrecisionSupport.Path != "" {
		prec += fmt.Sprintf(": %s on %s (%s)", w.PrecisionSupport.Path, hw.Architecture, w.PrecisionSupport.Kernel)
	}
	c("Precision:  %s", prec)
	img := fmt.Sprintf("%s (%s platform), chosen by %s", w.Image.Pull, w.Platform, w.Image.Source)
	if w.Image.Commit != "" {
		img += ", vLLM commit " + w.Image.Commit
	}
	c("Image:      %s", img)
	// Preamble fails on a plan whose hash cannot be computed, so no
	// script is written without this line.
	if h, err := plan.JobHash(w); err == nil {
		c("Job hash:   %s (wlc's identity of what this job runs: wlc show, wlc list, wlc diff)", h)
	}
	c("Steps:      %s", stepSummary(w))
	for _, l := range ShapeLines(w) {
		c("%s", l)
	}
	if len(w.Tools) > 0 {
		c("Tools:      %s", toolSummary(w))
	}
	c("Results:    %s/ (server.log and every result file)", w.ResultsPath)
	c("")
	c("%s", rt.Where)
	c("Run it from the directory that should receive results/:  bash %s.sh", w.Name)
	prereq := "bash"
	if n := needs(w, rt); len(n) > 0 {
		prereq += " and " + strings.Join(n, ", ")
	}
	c("It needs %s.", prereq)
	c("%s", exitSummary())
	c("")
	c("Optional environment:")
	env := [][2]string{
		{"WLC_PORT", "server port (default: " + portDefault(w) + ")"},
		{"WLC_RUN_ID", "names this run (default: BUILDKITE_JOB_ID, SLURM_JOB_ID, else pid-time)"},
		{"WLC_RESULTS_DIR", "where results go (default: $PWD/" + w.ResultsPath + ")"},
		{"WLC_POLL_S", "seconds between readiness polls (default 0.25)"},
		{"WLC_STOP_TIMEOUT_S", "grace period before the server is killed (default 8: within a CI agent's 10 s cancel grace)"},
	}
	if len(w.Tools) > 0 {
		env = append(env,
			[2]string{"WLC_TOOLS_VENV", "the client tools' virtual environment (default: the job's own; a directory named here is kept and reused)"},
			[2]string{"WLC_TOOLS_RETRY_S", "seconds before the first pip retry (default 10; doubled next)"})
	}
	if len(w.Datasets) > 0 {
		env = append(env,
			[2]string{"WLC_DATA_DIR", "where datasets are prepared, as the clients see it (default /tmp/wlc-data)"},
			[2]string{"WLC_SPEED_BENCH_PREPARE_URL", "NeMo-Skills' SPEED-Bench prepare.py (default: at a pinned commit)"},
			[2]string{"WLC_SPEED_BENCH_PREPARE_SHA256", "the sha256 that prepare.py must have (default: not checked; the commit pins it)"})
	}
	env = append(env, rt.Env...)
	for _, e := range env {
		c("  %-19s %s", e[0], e[1])
	}
	if len(w.Secrets) > 0 {
		c("Secrets, passed to the server by name only: %s", strings.Join(w.Secrets, ", "))
	}
	return string(b)
}

// appendCommentLines appends each line of s to b as a # comment
// (Comment), without trailing blanks: strings.TrimRight("# "+Comment(l),
// " ") + "\n" for each line l, written in place (the header's ~30 lines
// allocated five strings each, a tenth of a cached export's lowering).
func appendCommentLines(b []byte, s string) []byte {
	for l := range strings.SplitSeq(s, "\n") {
		start := len(b)
		b = append(b, "# "...)
		for _, r := range l {
			b = utf8.AppendRune(b, commentRune(r))
		}
		for len(b) > start && b[len(b)-1] == ' ' {
			b = b[:len(b)-1]
		}
		b = append(b, '\n')
	}
	return b
}

func portDefault(w plan.Workload) string {
	if w.Port != 0 {
		return fmt.Sprintf("%d, the workload's port", w.Port)
	}
	return "a free port derived from the run id"
}

func stepSummary(w plan.Workload) string {
	if j := w.Job; j != nil {
		if j.Where == "host" {
			return "the custom job, on the host running this script (no server, no container)"
		}
		return "the custom job, in the server's place with every reserved GPU (no server)"
	}
	var parts []string
	if n := len(w.Bench); n > 0 {
		inv := 0
		for _, r := range w.Bench {
			inv += len(r.RunFiles)
		}
		s := fmt.Sprintf("%s: %d run(s)", engineOf(w).client, n)
		if inv > n {
			s += fmt.Sprintf(", %d invocations with repetitions (median kept)", inv)
		}
		parts = append(parts, s)
	}
	if len(w.LMEval) > 0 {
		var ts []string
		for _, t := range w.LMEval {
			ts = append(ts, t.Task)
		}
		parts = append(parts, "lm_eval "+strings.Join(ts, ", "))
	}
	if len(w.BFCL) > 0 {
		var cs []string
		for _, r := range w.BFCL {
			cs = append(cs, r.Category)
		}
		parts = append(parts, "bfcl "+strings.Join(cs, ", "))
	}
	for _, c := range w.Custom {
		parts = append(parts, "custom step "+c.Name+" (on the "+c.Where+")")
	}
	if len(parts) == 0 {
		return "none (the server starts, becomes ready and stops)"
	}
	return strings.Join(parts, "; then ")
}

func toolSummary(w plan.Workload) string {
	var parts []string
	for _, t := range w.Tools {
		how := "installed with pip (" + strings.Join(t.Packages, " ") + ") unless present"
		if t.InImage {
			how = "shipped by the image (checked)"
		}
		parts = append(parts, t.Name+" for "+t.For+", "+how)
	}
	return strings.Join(parts, "; ")
}

// Comment makes s safe inside a # comment: no line breaks (which would
// end the comment and turn the rest into code) and no control characters.
func Comment(s string) string { return strings.Map(commentRune, s) }

// commentRune is r inside a # comment: a line break or control character
// becomes a blank.
func commentRune(r rune) rune {
	if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
		return ' '
	}
	return r
}

// Preamble is `set -euo pipefail` and the workload's variables, which
// lib.sh reads. With fixedResults the results directory is always
// $PWD/results/<name> (a Slurm job's log is written there by #SBATCH
// --output, so results cannot move); otherwise WLC_RESULTS_DIR may move it.
func Preamble(w plan.Workload, fixedResults bool) (string, error) {
	var b strings.Builder
	// Functions run through wlc_step or the EXIT trap look unreachable to
	// shellcheck (SC2317), and values quoted on purpose ('$(x)') look like
	// mistakes (SC2016); the directive before the first command covers the file.
	b.WriteString("# Functions called through wlc_step and the EXIT trap are reachable, and\n")
	b.WriteString("# values in single quotes are meant literally:\n")
	b.WriteString("# shellcheck disable=SC2317,SC2016\nset -euo pipefail\n\n# ---- Workload ----\n\n")
	mj, err := jsonString(w.Model)
	if err != nil {
		return "", err
	}
	port := "''"
	if w.Port != 0 {
		port = strconv.Itoa(w.Port)
	}
	hash, err := plan.JobHash(w)
	if err != nil {
		return "", err
	}
	vals := []struct{ name, value, comment string }{
		{"WLC_WORKLOAD", w.Name, ""},
		{"WLC_MODEL", w.Model, ""},
		{"WLC_MODEL_JSON", mj, "how /v1/models spells it"},
		{"WLC_STARTUP_TIMEOUT_S", strconv.Itoa(w.StartupTimeoutS), ""},
	}
	for _, v := range vals {
		a, err := Assign(v.name, v.value, NoVars)
		if err != nil {
			return "", err
		}
		if v.comment != "" {
			a += " # " + v.comment
		}
		b.WriteString(a + "\n")
	}
	b.WriteString("WLC_WORKLOAD_PORT=" + port + " # '' picks a free port\n")
	env, err := EnvArray(w.Env)
	if err != nil {
		return "", err
	}
	b.WriteString(env)
	// Exported: every step (and what records the run's provenance) can
	// name the job it belongs to. A hash is [v0-9a-f-] only: no quoting.
	b.WriteString("export WLC_JOB_HASH=" + hash + " # what this job runs, hashed (wlc show prints it)\n")
	rp, err := Quote(w.ResultsPath)
	if err != nil {
		return "", err
	}
	if fixedResults {
		b.WriteString("WLC_RESULTS_DIR=$PWD/" + rp + " # where #SBATCH --output and the client steps write\n")
	} else {
		b.WriteString("WLC_RESULTS_DIR=${WLC_RESULTS_DIR:-$PWD/" + rp + "}\n")
	}
	return b.String(), nil
}

// EnvArray is the shell setting WLC_ENV, the workload's environment as
// NAME=value words. It is never exported: the server (env "${WLC_ENV[@]}"
// vllm serve, on every node and in every role) and the clients
// (wlc_client) get it as arguments, so the job's own shell and tools
// (curl, python3, pip, bash, srun) run in the environment the job was
// started with, whatever names the workload sets (PATH, BASH_ENV,
// PYTHONPATH, *_proxy, the dashboards' URLs...).
func EnvArray(env []plan.EnvVar) (string, error) {
	const doc = "# The workload's environment: the server's and its clients', as arguments\n" +
		"# of env; never exported (the job's own tools never read it).\n"
	if len(env) == 0 {
		return doc + "WLC_ENV=()\n", nil
	}
	var b strings.Builder
	b.WriteString(doc + "WLC_ENV=(\n")
	for _, e := range env {
		a, err := Assign(e.Name, e.Value, NoVars)
		if err != nil {
			return "", err
		}
		b.WriteString("  " + a + "\n")
	}
	b.WriteString(")\n")
	return b.String(), nil
}

// jsonString is s as a JSON string the way vLLM's API writes it
// (UTF-8 kept, no HTML escaping).
func jsonString(s string) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// Library is lib.sh, the result tool (results.py as WLC_RESULTS_PY) and
// the programs w's steps need where the clients run: the tools check
// (tools.sh as WLC_TOOLS_SH, with w's tools in WLC_TOOLS), the SPEED-Bench
// preparation (speed_bench.py as WLC_SPEED_BENCH_PY) and the BFCL driver
// (bfcl.py as WLC_BFCL_PY).
func Library(w plan.Workload) string { return strings.Join(libraryParts(w), "") }

// libraryParts are Library's texts in order: the embedded tools are built
// once, shared by every script (a script is mostly them, and building
// them again for each of an export's workloads showed in its profile).
func libraryParts(w plan.Workload) []string {
	parts := []string{libWithResults, provenancePlan(w)}
	if len(w.Tools) > 0 {
		parts = append(parts, toolsEmbed, toolList(w))
	}
	if w.Job == nil {
		parts = append(parts, engineLine(w), preflightEmbed)
	}
	if len(w.Datasets) > 0 {
		parts = append(parts, speedBenchEmbed)
	}
	if len(w.BFCL) > 0 {
		parts = append(parts, bfclEmbed)
	}
	return parts
}

// toolList is the shell setting WLC_TOOLS to the tools w's steps need.
func toolList(w plan.Workload) string {
	var b strings.Builder
	b.WriteString("# The tools this workload's steps need: name, install|image, modules, packages.\nWLC_TOOLS=(\n")
	for _, t := range w.Tools {
		mode := "install"
		if t.InImage {
			mode = "image"
		}
		words := []string{t.Name, mode, strings.Join(t.Modules, " "), strings.Join(t.Packages, " ")}
		for i, x := range words {
			q, _ := Quote(x) // names, modules and requirements: never a NUL
			words[i] = q
		}
		b.WriteString("  " + strings.Join(words, " ") + "\n")
	}
	b.WriteString(")\n")
	return b.String()
}

// engineLine is the shell setting WLC_ENGINE, preflight.sh's ENGINE.
func engineLine(w plan.Workload) string {
	return "\n# The engine the preflight asks the image about.\nWLC_ENGINE=" + engineOf(w).preflight + "\n"
}

// provenancePlan is the shell setting WLC_PROVENANCE_PLAN, the part of
// provenance.json wlc knows at export: what w runs (its server's command,
// arguments and environment; secrets by name only) on what.
func provenancePlan(w plan.Workload) string {
	env := map[string]string{}
	for _, e := range w.Env {
		env[e.Name] = e.Value
	}
	type image struct {
		Ref    string `json:"ref"`
		Pull   string `json:"pull"`
		Commit string `json:"commit,omitempty"`
	}
	type server struct {
		Command []string          `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
		Secrets []string          `json:"secrets"`
	}
	p := struct {
		File     string `json:"file"`
		Model    string `json:"model"`
		Engine   string `json:"engine"`
		Platform string `json:"platform"`
		Hardware string `json:"hardware"`
		Nodes    int    `json:"nodes"`
		GPUs     int    `json:"gpus_per_node"`
		Image    image  `json:"image"`
		Server   server `json:"server"`
	}{w.File, w.Model, w.Engine, w.Platform, w.Hardware.Name, w.Nodes, w.GPUsPerNode,
		image{w.Image.Ref, w.Image.Pull, w.Image.Commit},
		server{w.Serve.Command, w.Serve.Args, env, w.Secrets}}
	if p.Server.Secrets == nil {
		p.Server.Secrets = []string{}
	}
	j, err := compactJSON(p)
	if err == nil {
		j, err = Quote(j)
	}
	if err != nil {
		// A value JSON or a shell word cannot hold (a NUL): the load refuses those.
		j = "null"
	}
	return "\n# What this job runs, for provenance.json (backends/runner/provenance.sh).\nWLC_PROVENANCE_PLAN=" + j + "\n"
}

// embedTool is the shell that sets variable name to text, a tool's source
// the script runs, under a comment saying what it is.
func embedTool(name, what, text string) string {
	return "\n# " + what + "\n" + name + "=$(\n  cat <<'WLC_EOF'\n" + text + "WLC_EOF\n)\n"
}

var (
	libWithResults  = lib + exitsShell() + provenanceSh + embedTool("WLC_RESULTS_PY", "The result tool: checks bench results and writes medians (backends/runner/results.py).", resultsPy)
	toolsEmbed      = embedTool("WLC_TOOLS_SH", "The client tools' install, run where the clients run (backends/runner/tools.sh).", toolsSh)
	preflightEmbed  = embedTool("WLC_PREFLIGHT_SH", "The preflight, run where the server will run (backends/runner/preflight.sh).", preflightSh)
	speedBenchEmbed = embedTool("WLC_SPEED_BENCH_PY", "The SPEED-Bench preparation, run where vllm bench runs (backends/runner/speed_bench.py).", speedBenchPy)
	bfclEmbed       = embedTool("WLC_BFCL_PY", "The BFCL driver, run where the clients run (backends/runner/bfcl.py).", bfclPy)
)

// Ingest is the dashboards' part of the script: the endpoints, the row
// shapes every row is checked against, and the ingest tool (ingest.py as
// WLC_INGEST_PY).
func Ingest(w plan.Workload) (string, error) {
	// It depends on the row shapes alone, which every workload of a load
	// shares: rendered (and its ~15 KB quoted) once per shapes.
	if s, ok := ingestText.Load(w.Ingest.Shapes); ok {
		return s.(string), nil
	}
	s, err := renderIngest(w.Ingest.Shapes)
	if err == nil {
		ingestText.Store(w.Ingest.Shapes, s)
	}
	return s, err
}

// ingestText memoizes renderIngest by shapes.
var ingestText sync.Map

func renderIngest(shapes string) (string, error) {
	var b strings.Builder
	b.Grow(len(ingestPy) + 2*len(shapes) + 1024)
	b.WriteString("\n# ---- Dashboards (perf-eval's ingest; see wlc_ingest) ----\n\n")
	for _, v := range [][2]string{
		{"WLC_PERF_INGEST_DEFAULT", dashboard.PerfURL},
		{"WLC_EVAL_INGEST_DEFAULT", dashboard.EvalURL},
		{"WLC_PERF_SOURCE", dashboard.PerfSource},
		{"WLC_INGEST_TIMEOUT_S", strconv.Itoa(dashboard.TimeoutS)},
	} {
		a, err := Assign(v[0], v[1], NoVars)
		if err != nil {
			return "", err
		}
		b.WriteString(a + "\n")
	}
	b.WriteString("# The row shapes, derived from schema/ingest.cue by internal/results/ingest:\n")
	a, err := Assign("WLC_INGEST_SHAPES", shapes, NoVars)
	if err != nil {
		return "", err
	}
	b.WriteString(a + "\n")
	b.WriteString("# The ingest tool (backends/runner/ingest.py).\nWLC_INGEST_PY=$(\n  cat <<'PY'\n")
	b.WriteString(ingestPy)
	b.WriteString("PY\n)\n")
	return b.String(), nil
}

// PerfIngest is the wlc_ingest call after bench run r: the tool runs
// where vllm bench wrote the result.
func PerfIngest(w plan.Workload, r plan.BenchRun) (string, error) {
	row, err := compactJSON(w.Ingest.Perf.Run(r))
	if err != nil {
		return "", err
	}
	words, err := Words([]string{r.Name, row}, NoVars)
	if err != nil {
		return "", err
	}
	res, err := Quote(r.Result)
	if err != nil {
		return "", err
	}
	return Continued([][]string{
		{"wlc_ingest", "perf", words[0], "wlc_in_server", "--", "perf"},
		{words[1]},
		{`"$WLC_BENCH_DIR"/` + res},
	}, "  ") + "\n", nil
}

// EvalIngest is the wlc_ingest call after lm_eval task t: like the perf
// rows, its rows are built where the clients ran and wrote (python3 is
// there: the tools check ran it), then kept and sent from here.
func EvalIngest(w plan.Workload, t plan.LMEvalRun) (string, error) {
	return evalIngest(w, t.Task, "eval", t.Task, t.OutputDir)
}

// BFCLIngest is the wlc_ingest call after BFCL category r: one eval row
// set per score the BFCL driver wrote (the category, and for a group each
// leaf category), listed in its manifest, as perf-eval's run.sh ingested
// them (without samples: BFCL writes none).
func BFCLIngest(w plan.Workload, r plan.BFCLRun) (string, error) {
	return evalIngest(w, "bfcl_"+r.Category, "bfcl", r.Category, "")
}

// evalIngest renders `wlc_ingest eval NAME -- MODE META DIR`: MODE is the
// ingest tool's command, META the row fields known at export, DIR (under
// the results directory) where the tool reads.
func evalIngest(w plan.Workload, name, mode, task, dir string) (string, error) {
	// source_file is results_path[/<sweep folder>][/dir]/<file>: the
	// ingest tool knows the sweep's folder, wlc the rest.
	meta, err := compactJSON(map[string]string{
		"workload":     w.Ingest.Workload,
		"task":         task,
		"image":        w.Ingest.Perf.Image,
		"vllm_commit":  w.Image.Commit,
		"results_path": w.ResultsPath,
		"dir":          dir,
	})
	if err != nil {
		return "", err
	}
	words, err := Words([]string{name, mode, meta}, NoVars)
	if err != nil {
		return "", err
	}
	path := plan.ResultsDir
	if dir != "" {
		path += "/" + dir
	}
	d, err := Word(path, ServerVars)
	if err != nil {
		return "", err
	}
	return Continued([][]string{{"wlc_ingest", "eval", words[0], "wlc_in_server", "--", words[1]}, {words[2]}, {d}}, "  ") + "\n", nil
}

// compactJSON is v as one line of JSON, keys in a fixed order.
func compactJSON(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// ToolsVenv is the run section's line choosing the client tools'
// virtual environment: WLC_TOOLS_VENV when set (kept), else rt's default
// (the job's own).
func ToolsVenv(rt Runtime) string {
	own := "1"
	if rt.ToolsVenvKept {
		own = "0"
	}
	return "if [ -z \"$WLC_TOOLS_VENV\" ]; then\n  WLC_TOOLS_VENV=" + rt.ToolsVenv + "\n  WLC_TOOLS_OWN=" + own + "\nfi\n"
}

// ServeOptions are the option strings among w's server arguments (and
// every backend sweep's, and extra, what a runtime adds), each once, in
// the order they first appear: what the preflight checks the image for.
func ServeOptions(w plan.Workload, extra ...string) []string {
	args := append([]string{}, w.Serve.Args...)
	if w.Sweep != nil {
		for _, r := range w.Sweep.Runs {
			args = append(args, r.Args...)
		}
	}
	args = append(args, extra...)
	var out []string
	seen := map[string]bool{}
	for _, a := range args {
		if !isOption(a) {
			continue
		}
		o := a
		if strings.HasPrefix(o, "--") {
			o, _, _ = strings.Cut(o, "=")
		}
		if !seen[o] {
			seen[o] = true
			out = append(out, o)
		}
	}
	return out
}

// isOption: a token argparse reads as an option string (-x, --xx,
// --xx=v), not a negative number and not a value with a blank in it
// (argparse takes "-x y" as one positional value).
func isOption(a string) bool {
	rest := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
	name, _, _ := strings.Cut(a, "=")
	return rest != a && rest != "" && unicode.IsLetter(rune(rest[0])) && !strings.ContainsAny(name, " \t\n")
}

// Preflight is the run section's wlc_preflight call with w's server
// options and extra (the runtime's own flags, e.g. --host and --port).
func Preflight(w plan.Workload, extra []string) (string, error) {
	opts := ServeOptions(w, append([]string{"--host", "--port"}, extra...)...)
	words, err := Words(opts, NoVars)
	if err != nil {
		return "", err
	}
	lines := [][]string{{"wlc_preflight"}}
	for len(words) > 0 {
		n := min(6, len(words))
		lines = append(lines, words[:n])
		words = words[n:]
	}
	return "# The image's engine must know every option the server gets.\n" + Continued(lines, "  ") + "\n", nil
}

// needs are the programs the script checks for first: curl (to poll the
// server) and the runtime's; a custom job polls no server.
func needs(w plan.Workload, rt Runtime) []string {
	if w.Job != nil {
		return rt.Tools
	}
	return append([]string{"curl"}, rt.Tools...)
}

// Run is the run section: checks, wlc_init, the runtime's Prepare, server
// start, readiness, then Steps, then exit with the first failure's status.
func Run(w plan.Workload, rt Runtime) (string, error) {
	var b strings.Builder
	b.WriteString("# ---- Run ----\n\n")
	if tools := needs(w, rt); len(tools) > 0 {
		b.WriteString("wlc_require " + strings.Join(tools, " ") + "\n")
	}
	if len(w.Secrets) > 0 {
		b.WriteString("wlc_warn_unset " + strings.Join(w.Secrets, " ") + "\n")
	}
	b.WriteString("wlc_init\n")
	if rt.Prepare != "" {
		b.WriteString(rt.Prepare)
	}
	if len(w.Tools) > 0 {
		b.WriteString(ToolsVenv(rt))
	}
	if w.Job == nil && !rt.PreflightAtStart {
		pf, err := Preflight(w, nil)
		if err != nil {
			return "", err
		}
		b.WriteString(pf)
	}
	steps, err := Steps(w)
	if err != nil {
		return "", err
	}
	serve, err := Serve(w, steps)
	if err != nil {
		return "", err
	}
	b.WriteString(serve)
	b.WriteString("\nexit \"$WLC_STATUS\"\n")
	return b.String(), nil
}

// Steps renders the benchmark and evaluation steps in the order perf-eval
// ran them: the datasets the bench runs read, every vllm bench serve run,
// then lm_eval tasks, then bfcl categories. Each is one wlc_step call;
// every client runs where the server runs (wlc_in_server).
func Steps(w plan.Workload) (string, error) {
	var b strings.Builder
	for _, d := range w.Datasets {
		words, err := Words([]string{d.Subset, d.Category, d.Path}, ServerVars)
		if err != nil {
			return "", err
		}
		label, err := Quote("prepare " + d.Name)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "\n# The %s dataset, which vllm bench serve reads but does not download\n", Comment(d.Name))
		fmt.Fprintf(&b, "wlc_step %s wlc_in_tools python3 -c \"$WLC_SPEED_BENCH_PY\" %s \"$WLC_SPEED_BENCH_PREPARE_URL\" \"$WLC_SPEED_BENCH_PREPARE_SHA256\"\n", label, strings.Join(words, " "))
	}
	for _, r := range w.Bench {
		s, err := benchStep(BenchFunc(w), r)
		if err != nil {
			return "", err
		}
		ing, err := PerfIngest(w, r)
		if err != nil {
			return "", err
		}
		b.WriteString("\n" + s + ing)
	}
	// lm_eval and BFCL run where the server runs (wlc_eval, which brings
	// their output back to the results directory).
	for _, t := range w.LMEval {
		if len(t.Argv) == 0 {
			return "", fmt.Errorf("lm_eval task %s has no argv", t.Task)
		}
		s, err := evalStep("lm_eval "+t.Task, "lm_eval task "+t.Task, []string{"lm_eval"}, nil, t.Argv)
		if err != nil {
			return "", err
		}
		ing, err := EvalIngest(w, t)
		if err != nil {
			return "", err
		}
		b.WriteString("\n" + s + ing)
	}
	for _, r := range w.BFCL {
		desc := "bfcl " + r.Category + ": registered, generate, then evaluate"
		if r.MaxTestCases > 0 {
			desc += fmt.Sprintf("; the first %d cases", r.MaxTestCases)
		}
		s, err := evalStep("bfcl "+r.Category, desc, []string{"lm_eval", "bfcl"},
			[]string{"python3", "-c", `"$WLC_BFCL_PY"`}, r.Argv)
		if err != nil {
			return "", err
		}
		ing, err := BFCLIngest(w, r)
		if err != nil {
			return "", err
		}
		b.WriteString("\n" + s + ing)
	}
	for _, c := range w.Custom {
		s, err := CustomStep(c)
		if err != nil {
			return "", err
		}
		b.WriteString("\n" + s)
	}
	return b.String(), nil
}

// evalStep is `wlc_step LABEL wlc_eval FETCH... -- HEAD ARGV...`: the
// command runs where the server runs and FETCH (directories of its
// results) come back to the results directory. head are shell words used
// as they are; argv is rendered with ServerVars.
func evalStep(label, desc string, fetch, head, argv []string) (string, error) {
	l, err := Quote(label)
	if err != nil {
		return "", err
	}
	words, err := Words(argv, ServerVars)
	if err != nil {
		return "", err
	}
	first := append([]string{"wlc_step", l, "wlc_eval"}, fetch...)
	first = append(first, "--")
	if head == nil {
		// The program and what names it (python3 -m lm_eval) lead.
		head, words = words[:1], words[1:]
		for len(words) > 0 && !strings.HasPrefix(words[0], "--") {
			head, words = append(head, words[0]), words[1:]
		}
	}
	lines := [][]string{first, head}
	lines = append(lines, Group(words)...)
	return "# " + Comment(desc) + "\n" + Continued(lines, "  ") + "\n", nil
}

func benchStep(fn string, r plan.BenchRun) (string, error) {
	label, err := Quote("bench " + r.Name)
	if err != nil {
		return "", err
	}
	fixed, err := Words(append([]string{r.Name, strconv.Itoa(r.NumPrompts), r.Result}, r.RunFiles...), NoVars)
	if err != nil {
		return "", err
	}
	args, err := Words(r.Args, ServerVars)
	if err != nil {
		return "", err
	}
	first := []string{"wlc_step", label, fn, fixed[0], fixed[1], fixed[2]}
	if r.AllowFailedRequests != "" {
		// For the step only: the check accepts failed requests, saying why.
		reason, err := Quote(r.AllowFailedRequests)
		if err != nil {
			return "", err
		}
		first = append([]string{"WLC_ALLOW_FAILED=" + reason}, first...)
	}
	lines := [][]string{first}
	for _, f := range fixed[3:] {
		lines = append(lines, []string{f})
	}
	lines = append(lines, []string{"--"})
	lines = append(lines, Group(args)...)
	desc := fmt.Sprintf("# %s at concurrency %d: %d prompts", r.Config, r.MaxConcurrency, r.NumPrompts)
	if len(r.RunFiles) > 1 {
		desc += fmt.Sprintf(", %d repetitions, median in %s", len(r.RunFiles), r.Result)
	}
	return Comment(desc) + "\n" + Continued(lines, "  ") + "\n", nil
}

// Skipped is the script for a workload whose platform has no image in this
// build: it says why and exits 0.
func Skipped(w plan.Workload, backend, reason string) ([]byte, error) {
	rt := Runtime{Backend: backend, Where: "This build has no image for the workload's platform."}
	r, err := Quote("skipped " + w.Name + ": " + reason)
	if err != nil {
		return nil, err
	}
	return []byte(Header(w, rt) + "set -euo pipefail\n\necho " + r + " >&2\n"), nil
}
