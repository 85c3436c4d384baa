// Package plan is the resolved, backend-neutral form of a workload: what
// runs where, with which image, environment and exact argv. Backends
// consume only this form; they never see CUE or the filesystem.
//
// Argv tokens may contain placeholders that only the runner knows:
// BaseURL ("{base_url}", the server's http://host:port), ResultsDir
// ("{results_dir}", the workload's results directory, as the clients see
// it) and DataDir ("{data_dir}", where prepared datasets are kept). A
// backend renders them as references to its own runtime variables.
package plan

import "github.com/wlcdev/wlc/schema"

// Placeholders for values known only when the job runs.
const (
	BaseURL    = "{base_url}"
	ResultsDir = "{results_dir}"
	DataDir    = "{data_dir}"
)

// Workload is one resolved workload.
type Workload struct {
	Name string `json:"name"`
	// RunName is perf-eval's name for the run (dashboard_name, else Name):
	// the step label, the results folder and the dashboards' key.
	RunName     string `json:"run_name"`
	Description string `json:"description,omitempty"`
	// File is the CUE file defining the workload (for selection by path).
	File string `json:"file"`
	// Recipe is set when the server was derived from a vLLM recipe.
	Recipe *RecipeOrigin `json:"recipe,omitempty"`

	Profile  schema.Profile  `json:"profile"`
	Hardware schema.Hardware `json:"hardware"`
	// Platform is the container platform: cuda, rocm or xpu.
	Platform string `json:"platform"`

	Nodes       int `json:"nodes"`
	GPUsPerNode int `json:"gpus_per_node"`
	// GPUs is every GPU the server uses (nodes × GPUs per node; prefill
	// plus decode GPUs when serving is disaggregated): the dashboards'
	// per-GPU throughputs are divided by it.
	GPUs int `json:"gpus"`

	// Engine is the serving engine: schema.EngineVLLM or EngineSGLang. It
	// decides the server's command (Serve.Command) and the benchmark
	// client every Bench run uses (vllm bench serve or sglang.bench_serving).
	Engine string `json:"engine"`

	Model     string `json:"model"`
	Precision string `json:"precision"`
	// PrecisionSupport says how the hardware runs the precision: natively
	// or through a fallback kernel.
	PrecisionSupport schema.Support `json:"precision_support"`

	Image Image `json:"image"`

	// Env is the server's environment (profile env under workload env,
	// HF_HOME added), sorted by name. Secrets are not in it.
	Env []EnvVar `json:"env"`
	// Secrets are variable names passed by name from the job environment.
	Secrets []string `json:"secrets"`

	StartupTimeoutS int  `json:"startup_timeout_s"`
	TimeoutMinutes  int  `json:"timeout_in_minutes"`
	Nightly         bool `json:"nightly"`
	BenchOnly       bool `json:"bench_only"`
	// Port is fixed by the workload, or 0: the runner picks a free one.
	Port int `json:"port,omitempty"`

	Serve Serve `json:"serve"`
	// Tools are the client programs the steps need, checked (and
	// installed unless the image ships them) before the server starts.
	Tools []Tool `json:"tools,omitempty"`
	// Datasets are prepared once, before the bench runs that read them.
	Datasets []Dataset   `json:"datasets,omitempty"`
	Bench    []BenchRun  `json:"bench,omitempty"`
	LMEval   []LMEvalRun `json:"lm_eval,omitempty"`
	// BFCL has one run per test category, in the workload's order.
	BFCL []BFCLRun `json:"bfcl,omitempty"`
	// Disagg is set when prefill and decode instances serve behind a
	// router (the results are disaggregated); Serve then holds only the
	// options every instance shares.
	Disagg *Disagg `json:"disagg,omitempty"`
	// BenchMetadata are the workload's free-form result tags.
	BenchMetadata map[string]any `json:"bench_metadata,omitempty"`
	// Ingest is what the job tells the dashboards about its results.
	Ingest Ingest `json:"-"`

	// ResultsPath is where every result lands, relative to the job's
	// working directory: results/<run name>.
	ResultsPath string `json:"results_dir"`

	// IdleGPUs of the reserved ones the server leaves idle on purpose,
	// for IdleReason (0: every reserved GPU is used).
	IdleGPUs   int    `json:"idle_gpus,omitempty"`
	IdleReason string `json:"idle_reason,omitempty"`
	// Sweep runs the server once per backend, every step against each;
	// nil runs it once.
	Sweep *BackendSweep `json:"backend_sweep,omitempty"`
	// Custom are the workload's own steps, run after bench, lm_eval and
	// bfcl against the live server.
	Custom []CustomRun `json:"custom_steps,omitempty"`
	// Job, when set, runs instead of the server and every step: the
	// team's own program with the reserved GPUs (Where "gpus"), or on the
	// host running the job (Where "host"); its status is the job's.
	Job *CustomRun `json:"custom_job,omitempty"`
}

// BackendSweep is one server per backend, in order.
type BackendSweep struct {
	// Kind is attention or moe; Flag the `vllm serve` option each run sets.
	Kind string     `json:"kind"`
	Flag string     `json:"flag"`
	Runs []SweepRun `json:"runs"`
}

// SweepRun is one backend of a sweep.
type SweepRun struct {
	// Backend as the workload names it; "default" adds no flag.
	Backend string `json:"backend"`
	// Dir is the run's results subdirectory: attn-<backend> or
	// moe-<backend> (perf-eval's names).
	Dir string `json:"dir"`
	// Args are added to the server's argv for this run.
	Args []string `json:"args,omitempty"`
}

// CustomRun is one custom step.
type CustomRun struct {
	Name string `json:"name"`
	// Where is server (beside the server, where vllm runs) or host; for
	// a custom job, gpus (in the server's place) or host.
	Where string `json:"where"`
	// Dir is the step's results subdirectory (custom-<name>), given to it
	// as WLC_STEP_DIR.
	Dir string `json:"dir"`
	// Env is what the step sees besides the job's environment: the
	// workload's step env and WLC_BASE_URL, WLC_MODEL, WLC_STEP_DIR
	// (placeholders as in argv).
	Env []EnvVar `json:"env"`
	// Argv is the command: the step's command, or bash -c SCRIPT NAME.
	Argv []string `json:"argv"`
}

// EnvVar is one environment variable.
type EnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Image is the container image chosen for the workload and why.
type Image struct {
	// Ref is the image reference the job runs.
	Ref string `json:"ref"`
	// Pull is Ref as the cluster pulls it (after the ECR pull-through
	// rewrite on profiles that use it).
	Pull string `json:"pull"`
	// Commit is the vLLM commit the image was built from, when known.
	Commit string `json:"commit,omitempty"`
	// Source names the rule that chose Ref (see ResolveImage).
	Source string `json:"source"`
	// Skip is set when the build provides no image for this platform:
	// the step is emitted but skipped with this reason.
	Skip string `json:"skip,omitempty"`
}

// Serve is the model server.
type Serve struct {
	// Command starts the server: `vllm serve` or `python3 -m
	// sglang.launch_server`. A vLLM image's entrypoint is `vllm serve`.
	Command []string `json:"command"`
	// Args follow Command: the model (vLLM: positional; SGLang:
	// --model-path), then every option. The runner adds --host/--port and
	// the multi-node rendezvous flags.
	Args                 []string `json:"args"`
	TensorParallelSize   int      `json:"tensor_parallel_size"`
	DataParallelSize     int      `json:"data_parallel_size"`
	PipelineParallelSize int      `json:"pipeline_parallel_size"`
	ExpertParallel       bool     `json:"enable_expert_parallel"`
}

// BenchRun is one benchmark client run after sweep expansion: `vllm bench
// serve` on engine vllm, `python3 -m sglang.bench_serving` on engine sglang.
type BenchRun struct {
	// Name is <config>-conc-<max_concurrency>.
	Name           string `json:"name"`
	Config         string `json:"config"`
	MaxConcurrency int    `json:"max_concurrency"`
	NumPrompts     int    `json:"num_prompts"`
	Repetitions    int    `json:"repetitions"`
	// InputLen and OutputLen are the config's lengths (the dashboards'
	// isl and osl).
	InputLen  int `json:"input_len"`
	OutputLen int `json:"output_len"`
	// Args follow the client's command; the runner adds --base-url and the
	// result-file flags.
	Args []string `json:"args"`
	// RunFiles are the per-repetition result files (relative to the
	// results dir); Result is the file holding the median over them (the
	// only file when Repetitions is 1).
	RunFiles []string `json:"run_files"`
	Result   string   `json:"result"`
	// Dataset is the prepared dataset the run reads, if any.
	// (Workload.Datasets lists it for show.)
	Dataset *Dataset `json:"-"`
	// AllowFailedRequests is the reason the config accepts failed
	// requests (schema's allow_failed_requests); empty: a run with one
	// fails.
	AllowFailedRequests string `json:"allow_failed_requests,omitempty"`
}

// LMEvalRun is one lm-evaluation-harness task.
type LMEvalRun struct {
	Task string `json:"task"`
	// OutputDir is where lm_eval writes (--output_path), relative to the
	// results directory.
	OutputDir string `json:"output_dir"`
	// Argv is the whole command, starting with python3 -m lm_eval: the
	// interpreter the job checked lm_eval imports with, whatever bin
	// directory pip put the lm_eval script in.
	Argv []string `json:"argv"`
}

// Dataset is a benchmark dataset the job prepares where the bench runs.
type Dataset struct {
	// Name is speed_bench/<subset>[/<category>].
	Name     string `json:"name"`
	Subset   string `json:"subset"`
	Category string `json:"category,omitempty"`
	// Path is the directory the runs read (--dataset-path), under
	// DataDir; the preparation writes <Path>/<Subset>.jsonl there.
	Path string `json:"path"`
}

// BFCLRun is one BFCL test category (or group) run the way BFCL runs: the
// served model registered for BFCL's OpenAI-compatible handler, `bfcl
// generate`, then `bfcl evaluate`, the scores written in lm_eval's results
// format. backends/runner's driver (bfcl.py) does it from Argv's options.
type BFCLRun struct {
	Category         string `json:"category"`
	MaxTestCases     int    `json:"max_test_cases,omitempty"`
	MaximumStepLimit int    `json:"maximum_step_limit"`
	// Argv are the driver's options.
	Argv []string `json:"argv"`
}

// RecipeOrigin says which rendering of an upstream vLLM recipe a workload's
// server was derived from (see #RecipeRef).
type RecipeOrigin struct {
	// Recipe is the recipe's <org>/<repo>; File is its YAML file.
	Recipe string `json:"recipe"`
	File   string `json:"file"`
	// Variant and Strategy are the ones composed (defaults resolved);
	// Hardware is the recipes' hardware id the profile maps to.
	Variant    string   `json:"variant"`
	Strategy   string   `json:"strategy"`
	Hardware   string   `json:"hardware"`
	Nodes      int      `json:"nodes"`
	Features   []string `json:"features,omitempty"`
	NoFeatures []string `json:"no_features,omitempty"`
	// Args are the argv tokens from the recipe that no typed serve option
	// holds; they lead serve.extra_args.
	Args []string `json:"args,omitempty"`
	// Env names the variables the recipe sets.
	Env []string `json:"env,omitempty"`
}
