package schema

// The types below mirror the CUE definitions field for field (json tags are
// the CUE field names); TestSchemaMirror keeps the two in sync.

// Support mirrors #Support.
type Support struct {
	Path   string `json:"path"`
	Kernel string `json:"kernel"`
}

// ArchitectureFacts mirrors #ArchitectureFacts.
type ArchitectureFacts struct {
	Generation    string             `json:"generation"`
	Weights       map[string]Support `json:"weights"`
	KVCacheDtypes []string           `json:"kv_cache_dtypes"`
}

// Hardware mirrors #Hardware.
type Hardware struct {
	Name         string  `json:"name"`
	Vendor       string  `json:"vendor"`
	Architecture string  `json:"architecture"`
	Generation   string  `json:"generation"`
	GPUsPerNode  int     `json:"gpus_per_node"`
	Memory       Memory  `json:"memory"`
	Reported     *Memory `json:"reported,omitempty"`
	MemoryGiB    float64 `json:"memory_gib"`
	MemoryGB     float64 `json:"memory_gb"`
}

// Memory mirrors #Memory.
type Memory struct {
	Amount float64 `json:"amount"`
	Unit   string  `json:"unit"`
	Bytes  float64 `json:"bytes"`
	GiB    float64 `json:"gib"`
	GB     float64 `json:"gb"`
}

// Profile mirrors #Profile.
type Profile struct {
	Name                string            `json:"name"`
	Hardware            string            `json:"hardware"`
	Runtime             string            `json:"runtime"`
	Queue               string            `json:"queue"`
	AgentTags           map[string]string `json:"agent_tags"`
	HFHome              string            `json:"hf_home,omitempty"`
	Env                 map[string]string `json:"env"`
	Secrets             []string          `json:"secrets"`
	ImageRepo           string            `json:"image_repo"`
	ECRPullThroughCache bool              `json:"ecr_pull_through_cache"`
	ImageTools          []string          `json:"image_tools"`
	K8s                 *K8s              `json:"k8s,omitempty"`
	Docker              *DockerHost       `json:"docker,omitempty"`
	Slurm               *SlurmCluster     `json:"slurm,omitempty"`
}

// K8s mirrors #K8s.
type K8s struct {
	Plugin          string         `json:"plugin"`
	HFCacheVolume   map[string]any `json:"hf_cache_volume"`
	ImagePullSecret string         `json:"image_pull_secret"`
	HFTokenSecret   SecretKeyRef   `json:"hf_token_secret"`
	HostPaths       []HostPath     `json:"host_paths"`
}

// HostPath mirrors #HostPath.
type HostPath struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

// SecretKeyRef names a key of a Kubernetes secret.
type SecretKeyRef struct {
	Name string `json:"name"`
	Key  string `json:"key"`
}

// DockerHost mirrors #DockerHost.
type DockerHost struct {
	AlwaysPull bool     `json:"always_pull"`
	Volumes    []string `json:"volumes"`
	ShmSize    string   `json:"shm_size"`
}

// SlurmCluster mirrors #SlurmCluster.
type SlurmCluster struct {
	Partition       string   `json:"partition,omitempty"`
	Account         string   `json:"account,omitempty"`
	QOS             string   `json:"qos,omitempty"`
	Reservation     string   `json:"reservation,omitempty"`
	TimeLimit       string   `json:"time_limit"`
	MaxNodes        int      `json:"max_nodes"`
	Gres            string   `json:"gres,omitempty"`
	Exclusive       bool     `json:"exclusive"`
	MPI             string   `json:"mpi,omitempty"`
	ExtraSbatchArgs []string `json:"extra_sbatch_args"`
	ExtraSrunArgs   []string `json:"extra_srun_args"`
	Pyxis           *Pyxis   `json:"pyxis,omitempty"`
}

// Pyxis mirrors #Pyxis.
type Pyxis struct {
	Image     string  `json:"image,omitempty"`
	Mounts    []Mount `json:"mounts"`
	Workdir   string  `json:"workdir,omitempty"`
	RemapRoot bool    `json:"remap_root"`
}

// Mount mirrors #Mount.
type Mount struct {
	Source   string `json:"source"`
	Target   string `json:"target"`
	ReadOnly bool   `json:"read_only"`
}

// Workload mirrors #Workload.
type Workload struct {
	Name             string            `json:"name"`
	Description      string            `json:"description,omitempty"`
	DashboardName    string            `json:"dashboard_name,omitempty"`
	Profile          string            `json:"profile"`
	Recipe           *RecipeRef        `json:"recipe,omitempty"`
	Nodes            int               `json:"nodes"`
	GPUsPerNode      int               `json:"gpus_per_node"`
	Model            string            `json:"model"`
	Precision        string            `json:"precision"`
	PrecisionPath    string            `json:"precision_path"`
	Image            string            `json:"image,omitempty"`
	PinImage         bool              `json:"pin_image"`
	Env              map[string]string `json:"env"`
	Secrets          []string          `json:"secrets"`
	StartupTimeoutS  int               `json:"startup_timeout_s"`
	TimeoutInMinutes int               `json:"timeout_in_minutes"`
	Nightly          bool              `json:"nightly"`
	BenchOnly        bool              `json:"bench_only"`
	Port             int               `json:"port,omitempty"`
	CheckpointGiB    float64           `json:"checkpoint_gib,omitempty"`
	ParamsB          float64           `json:"params_b,omitempty"`
	MemoryHeadroom   float64           `json:"memory_headroom"`
	Engine           string            `json:"engine"`
	Serve            Serve             `json:"serve"`
	SGLang           *SGLangServe      `json:"sglang,omitempty"`
	LMEval           *LMEval           `json:"lm_eval,omitempty"`
	VLLMBench        *VLLMBench        `json:"vllm_bench,omitempty"`
	SGLangBench      *SGLangBench      `json:"sglang_bench,omitempty"`
	BFCL             *BFCL             `json:"bfcl,omitempty"`
	Disagg           *Disagg           `json:"disagg,omitempty"`
	IdleGPUs         *IdleGPUs         `json:"idle_gpus,omitempty"`
	BackendSweep     *BackendSweep     `json:"backend_sweep,omitempty"`
	CustomSteps      []CustomStep      `json:"custom_steps,omitempty"`
	CustomJob        *CustomJob        `json:"custom_job,omitempty"`
}

// IdleGPUs mirrors #IdleGPUs.
type IdleGPUs struct {
	Count  int    `json:"count"`
	Reason string `json:"reason"`
}

// BackendSweep mirrors #BackendSweep.
type BackendSweep struct {
	Attention []string `json:"attention,omitempty"`
	MoE       []string `json:"moe,omitempty"`
}

// CustomStep mirrors #CustomStep.
type CustomStep struct {
	Name    string            `json:"name"`
	Where   string            `json:"where"`
	Script  string            `json:"script,omitempty"`
	Command []string          `json:"command,omitempty"`
	Env     map[string]string `json:"env"`
}

// CustomJob mirrors #CustomJob.
type CustomJob struct {
	Where   string            `json:"where"`
	Script  string            `json:"script,omitempty"`
	Command []string          `json:"command,omitempty"`
	Env     map[string]string `json:"env"`
}

// Engines: the values of #Workload.engine.
const (
	EngineVLLM   = "vllm"
	EngineSGLang = "sglang"
)

// SGLangServe mirrors #SGLangServe; internal/engine/sglang renders it.
type SGLangServe struct {
	TPSize                    int      `json:"tp_size"`
	PPSize                    int      `json:"pp_size"`
	DPSize                    int      `json:"dp_size"`
	EPSize                    int      `json:"ep_size"`
	EnableDPAttention         bool     `json:"enable_dp_attention"`
	ContextLength             int      `json:"context_length,omitempty"`
	MaxRunningRequests        int      `json:"max_running_requests,omitempty"`
	ChunkedPrefillSize        int      `json:"chunked_prefill_size,omitempty"`
	MaxPrefillTokens          int      `json:"max_prefill_tokens,omitempty"`
	MemFractionStatic         float64  `json:"mem_fraction_static,omitempty"`
	KVCacheDtype              string   `json:"kv_cache_dtype,omitempty"`
	DisableRadixCache         bool     `json:"disable_radix_cache"`
	TrustRemoteCode           bool     `json:"trust_remote_code"`
	AttentionBackend          string   `json:"attention_backend,omitempty"`
	MoEA2ABackend             string   `json:"moe_a2a_backend,omitempty"`
	MoERunnerBackend          string   `json:"moe_runner_backend,omitempty"`
	SpeculativeAlgorithm      string   `json:"speculative_algorithm,omitempty"`
	SpeculativeDraftModelPath string   `json:"speculative_draft_model_path,omitempty"`
	SpeculativeNumSteps       int      `json:"speculative_num_steps,omitempty"`
	SpeculativeEagleTopK      int      `json:"speculative_eagle_topk,omitempty"`
	SpeculativeNumDraftTokens int      `json:"speculative_num_draft_tokens,omitempty"`
	ToolCallParser            string   `json:"tool_call_parser,omitempty"`
	ReasoningParser           string   `json:"reasoning_parser,omitempty"`
	ExtraArgs                 []string `json:"extra_args"`
}

// SGLangBench mirrors #SGLangBench.
type SGLangBench struct {
	Metadata map[string]any      `json:"metadata"`
	Configs  []SGLangBenchConfig `json:"configs"`
}

// SGLangBenchConfig mirrors #SGLangBenchConfig (#BenchShape's fields and
// its own); MaxConcurrency and NumPrompts are normalized to lists.
type SGLangBenchConfig struct {
	Name                string               `json:"name"`
	InputLen            int                  `json:"input_len"`
	OutputLen           int                  `json:"output_len"`
	MaxConcurrency      IntOrList            `json:"max_concurrency"`
	NumPrompts          IntOrList            `json:"num_prompts"`
	Repetitions         int                  `json:"repetitions"`
	Backend             string               `json:"backend"`
	Dataset             string               `json:"dataset"`
	Args                map[string]any       `json:"args"`
	AllowFailedRequests *AllowFailedRequests `json:"allow_failed_requests,omitempty"`
}

// RecipeRef mirrors #RecipeRef.
type RecipeRef struct {
	Model      string   `json:"model"`
	Variant    string   `json:"variant,omitempty"`
	Strategy   string   `json:"strategy,omitempty"`
	Features   []string `json:"features"`
	NoFeatures []string `json:"no_features"`
}

// Serve mirrors #Serve.
type Serve struct {
	TensorParallelSize   int            `json:"tensor_parallel_size"`
	DataParallelSize     int            `json:"data_parallel_size"`
	PipelineParallelSize int            `json:"pipeline_parallel_size"`
	EnableExpertParallel bool           `json:"enable_expert_parallel"`
	KVCacheDtype         string         `json:"kv_cache_dtype,omitempty"`
	MaxModelLen          any            `json:"max_model_len,omitempty"` // int or "auto"
	MaxNumSeqs           int            `json:"max_num_seqs,omitempty"`
	MaxNumBatchedTokens  int            `json:"max_num_batched_tokens,omitempty"`
	GPUMemoryUtilization float64        `json:"gpu_memory_utilization,omitempty"`
	BlockSize            int            `json:"block_size,omitempty"`
	EnablePrefixCaching  *bool          `json:"enable_prefix_caching,omitempty"`
	TrustRemoteCode      bool           `json:"trust_remote_code"`
	TokenizerMode        string         `json:"tokenizer_mode,omitempty"`
	ToolCallParser       string         `json:"tool_call_parser,omitempty"`
	ReasoningParser      string         `json:"reasoning_parser,omitempty"`
	EnableAutoToolChoice bool           `json:"enable_auto_tool_choice"`
	LanguageModelOnly    bool           `json:"language_model_only"`
	MoEBackend           string         `json:"moe_backend,omitempty"`
	SpeculativeConfig    map[string]any `json:"speculative_config,omitempty"`
	CompilationConfig    map[string]any `json:"compilation_config,omitempty"`
	AttentionConfig      map[string]any `json:"attention_config,omitempty"`
	KernelConfig         map[string]any `json:"kernel_config,omitempty"`
	ExtraArgs            []string       `json:"extra_args"`
	// Options are the argv of the further vLLM options written as fields
	// of serve (#Serve's pattern), rendered by the loader from the image's
	// flag catalog (vllmflags.Catalog.RenderField), in field order.
	Options []string `json:"-"`
}

// LMEval mirrors #LMEval.
type LMEval struct {
	ModelArgs map[string]any `json:"model_args"`
	Tasks     []LMEvalTask   `json:"tasks"`
}

// LMEvalTask mirrors #LMEvalTask.
type LMEvalTask struct {
	Name       string         `json:"name"`
	NumFewshot int            `json:"num_fewshot"`
	ModelArgs  map[string]any `json:"model_args"`
}

// VLLMBench mirrors #VLLMBench.
type VLLMBench struct {
	Metadata map[string]any `json:"metadata"`
	Configs  []BenchConfig  `json:"configs,omitempty"`
	Sweep    *BenchSweep    `json:"sweep,omitempty"`
}

// BenchSweep mirrors #BenchSweep.
type BenchSweep struct {
	Shapes                []SweepShape   `json:"shapes"`
	Concurrency           Concurrency    `json:"concurrency"`
	PromptsPerConcurrency int            `json:"prompts_per_concurrency"`
	MinPrompts            int            `json:"min_prompts"`
	Backend               string         `json:"backend,omitempty"`
	Repetitions           int            `json:"repetitions"`
	Args                  map[string]any `json:"args"`
}

// SweepShape mirrors #SweepShape.
type SweepShape struct {
	InputLen  int `json:"input_len"`
	OutputLen int `json:"output_len"`
}

// ConcurrencyLadder mirrors #ConcurrencyLadder.
type ConcurrencyLadder struct {
	Start  int `json:"start"`
	End    int `json:"end"`
	Factor int `json:"factor"`
}

// BenchConfig mirrors #BenchConfig. MaxConcurrency and NumPrompts are
// normalized to lists by the loader (a scalar is a one-entry sweep).
type BenchConfig struct {
	Name                    string               `json:"name"`
	Backend                 string               `json:"backend,omitempty"`
	Dataset                 string               `json:"dataset"`
	InputLen                int                  `json:"input_len"`
	OutputLen               int                  `json:"output_len"`
	MaxConcurrency          IntOrList            `json:"max_concurrency"`
	NumPrompts              IntOrList            `json:"num_prompts"`
	Repetitions             int                  `json:"repetitions"`
	Args                    map[string]any       `json:"args"`
	SpeedBenchDatasetSubset string               `json:"speed_bench_dataset_subset,omitempty"`
	SpeedBenchCategory      string               `json:"speed_bench_category,omitempty"`
	AllowFailedRequests     *AllowFailedRequests `json:"allow_failed_requests,omitempty"`
}

// AllowFailedRequests mirrors #AllowFailedRequests.
type AllowFailedRequests struct {
	Reason string `json:"reason"`
}

// BFCL mirrors #BFCL.
type BFCL struct {
	TestCategories   []string `json:"test_categories"`
	NumThreads       int      `json:"num_threads"`
	Temperature      float64  `json:"temperature"`
	MaximumStepLimit int      `json:"maximum_step_limit"`
	// MaxTestCases is an int (every category) or a map category -> int.
	MaxTestCases any `json:"max_test_cases,omitempty"`
}

// Disagg mirrors #Disagg.
type Disagg struct {
	Prefill DisaggRole `json:"prefill"`
	Decode  DisaggRole `json:"decode"`
	Router  Router     `json:"router"`
}

// DisaggRole mirrors #DisaggRole.
type DisaggRole struct {
	Count      int               `json:"count"`
	Nodes      int               `json:"nodes"`
	Port       int               `json:"port"`
	KVTransfer *KVTransfer       `json:"kv_transfer,omitempty"`
	Serve      Serve             `json:"serve"`
	Env        map[string]string `json:"env"`
}

// KVTransfer mirrors #KVTransfer (vLLM's KVTransferConfig).
type KVTransfer struct {
	KVConnector            string         `json:"kv_connector"`
	KVRole                 string         `json:"kv_role"`
	KVLoadFailurePolicy    string         `json:"kv_load_failure_policy,omitempty"`
	KVBufferDevice         string         `json:"kv_buffer_device,omitempty"`
	KVConnectorExtraConfig map[string]any `json:"kv_connector_extra_config,omitempty"`
}

// Router mirrors #Router.
type Router struct {
	Command                   []string          `json:"command"`
	Dir                       string            `json:"dir,omitempty"`
	Policy                    string            `json:"policy"`
	IntraNodeDataParallelSize int               `json:"intra_node_data_parallel_size"`
	MetricsPort               int               `json:"metrics_port,omitempty"`
	NofileLimit               int               `json:"nofile_limit,omitempty"`
	StartupTimeoutS           int               `json:"startup_timeout_s"`
	Env                       map[string]string `json:"env"`
	ExtraArgs                 []string          `json:"extra_args"`
}

// Settings mirrors #Settings.
type Settings struct {
	Recipes   string             `json:"recipes,omitempty"`
	VLLMFlags *VLLMFlagsSettings `json:"vllm_flags,omitempty"`
}

// VLLMFlagsSettings mirrors #VLLMFlagsSettings.
type VLLMFlagsSettings struct {
	Images   map[string]string      `json:"images,omitempty"`
	Catalogs map[string]FlagCatalog `json:"catalogs,omitempty"`
}

// FlagCatalog mirrors #FlagCatalog.
type FlagCatalog struct {
	ServeHelp    string        `json:"serve_help,omitempty"`
	BenchHelp    string        `json:"bench_help,omitempty"`
	From         string        `json:"from,omitempty"`
	ServeOptions []ExtraOption `json:"serve_options,omitempty"`
	BenchOptions []ExtraOption `json:"bench_options,omitempty"`
}

// ExtraOption mirrors #ExtraOption.
type ExtraOption struct {
	Option     string `json:"option"`
	TakesValue bool   `json:"takes_value"`
	Source     string `json:"source"`
}
