package plan

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/wlcdev/wlc/internal/engine/cmdline"
	"github.com/wlcdev/wlc/schema"
)

// Catalog is what resolution reads besides the workload itself.
type Catalog struct {
	Profiles      map[string]schema.Profile
	Hardware      map[string]schema.Hardware
	Architectures map[string]schema.ArchitectureFacts
}

// Overrides are the export-time inputs a build passes through its
// environment (perf-eval.md §1.8).
type Overrides struct {
	VLLMImage     string // VLLM_IMAGE
	VLLMCommit    string // VLLM_COMMIT
	VLLMImageCUDA string // VLLM_IMAGE_CUDA
	VLLMImageROCm string // VLLM_IMAGE_ROCM
	VLLMImageXPU  string // VLLM_IMAGE_XPU
	SGLangImage   string // SGLANG_IMAGE: the image of every SGLang workload
	// BenchOnly (BENCH_ONLY=1|true|yes) runs performance benchmarks only:
	// lm_eval and bfcl are dropped from every workload.
	BenchOnly bool
}

// OverridesFromEnv reads the overrides with getenv.
func OverridesFromEnv(getenv func(string) string) Overrides {
	return Overrides{
		VLLMImage:     strings.TrimSpace(getenv("VLLM_IMAGE")),
		VLLMCommit:    strings.TrimSpace(getenv("VLLM_COMMIT")),
		VLLMImageCUDA: strings.TrimSpace(getenv("VLLM_IMAGE_CUDA")),
		VLLMImageROCm: strings.TrimSpace(getenv("VLLM_IMAGE_ROCM")),
		VLLMImageXPU:  strings.TrimSpace(getenv("VLLM_IMAGE_XPU")),
		SGLangImage:   strings.TrimSpace(getenv("SGLANG_IMAGE")),
		BenchOnly:     truthy(getenv("BENCH_ONLY")),
	}
}

// Resolve turns a validated workload into its plan. The loader has already
// checked every constraint; an error here means the catalog is
// inconsistent with the workload, which the loader would have reported.
func Resolve(w schema.Workload, file string, cat Catalog, ov Overrides) (Workload, error) {
	prof, ok := cat.Profiles[w.Profile]
	if !ok {
		return Workload{}, fmt.Errorf("workload %s: unknown profile %q", w.Name, w.Profile)
	}
	hw, ok := cat.Hardware[prof.Hardware]
	if !ok {
		return Workload{}, fmt.Errorf("profile %s: unknown hardware %q", prof.Name, prof.Hardware)
	}
	support := cat.Architectures[hw.Architecture].Weights[w.Precision]

	p := Workload{
		Name:             w.Name,
		Description:      w.Description,
		File:             file,
		Profile:          prof,
		Hardware:         hw,
		Platform:         PlatformOf(hw.Vendor),
		Nodes:            w.Nodes,
		GPUsPerNode:      w.GPUsPerNode,
		GPUs:             w.Nodes * w.GPUsPerNode,
		Engine:           w.Engine,
		Model:            w.Model,
		Precision:        w.Precision,
		PrecisionSupport: support,
		StartupTimeoutS:  w.StartupTimeoutS,
		TimeoutMinutes:   w.TimeoutInMinutes,
		Nightly:          w.Nightly,
		BenchOnly:        w.BenchOnly,
		Port:             w.Port,
		RunName:          w.RunName(),
		ResultsPath:      "results/" + w.RunName(),
	}
	if p.Engine == "" {
		p.Engine = schema.EngineVLLM
	}
	p.Env = mergeEnv(prof, w)
	p.Secrets = uniqueSorted(append(append([]string(nil), prof.Secrets...), w.Secrets...))
	switch p.Engine {
	case schema.EngineSGLang:
		p.Image = ResolveSGLangImage(w, prof, ov)
		p.Serve = sglangServe(w)
		if w.SGLangBench != nil {
			p.Bench = sglangBenchRuns(w)
			if len(w.SGLangBench.Metadata) > 0 {
				p.BenchMetadata = w.SGLangBench.Metadata
			}
		}
	default:
		p.Image = ResolveImage(w, prof, p.Platform, ov)
		p.Serve = serveArgs(w)
		if w.Disagg != nil {
			p.Disagg = disagg(w, p.Env)
			// The GPUs the server uses are every instance's (the schema
			// makes them the job's nodes × gpus_per_node).
			p.GPUs = 0
			for _, in := range p.Disagg.Instances {
				p.GPUs += in.Nodes * in.GPUsPerNode
			}
		}
		if w.VLLMBench != nil {
			p.Bench = benchRuns(w)
			if len(w.VLLMBench.Metadata) > 0 {
				p.BenchMetadata = w.VLLMBench.Metadata
			}
		}
	}
	if ov.BenchOnly {
		p.BenchOnly = true
	}
	if w.LMEval != nil && !p.BenchOnly {
		p.LMEval = lmEvalRuns(w)
	}
	if w.BFCL != nil && !p.BenchOnly {
		p.BFCL = bfclRuns(w)
	}
	if w.IdleGPUs != nil {
		p.IdleGPUs, p.IdleReason = w.IdleGPUs.Count, w.IdleGPUs.Reason
	}
	p.Sweep = backendSweep(w.BackendSweep)
	for _, s := range w.CustomSteps {
		p.Custom = append(p.Custom, customRun(w, s))
	}
	if j := w.CustomJob; j != nil {
		p.Job = customJob(w, *j)
	}
	p.Datasets = datasets(p.Bench)
	p.Tools = tools(p, prof)
	p.Ingest = ingestTags(p, w)
	if err := checkPlanValues(p); err != nil {
		return Workload{}, fmt.Errorf("workload %s: %w", w.Name, err)
	}
	return p, nil
}

// backendSweep lists one server per backend; "default" passes no flag,
// as perf-eval's run_attn_sweep.sh and run_moe_sweep.sh did.
func backendSweep(s *schema.BackendSweep) *BackendSweep {
	if s == nil {
		return nil
	}
	sw := &BackendSweep{Kind: "attention", Flag: "--attention-backend"}
	names, prefix := s.Attention, "attn-"
	if len(s.MoE) > 0 {
		sw = &BackendSweep{Kind: "moe", Flag: "--moe-backend"}
		names, prefix = s.MoE, "moe-"
	}
	for _, b := range names {
		r := SweepRun{Backend: b, Dir: prefix + b}
		if b != "default" {
			r.Args = []string{sw.Flag, b}
		}
		sw.Runs = append(sw.Runs, r)
	}
	return sw
}

// customJob is the program a custom_job runs in the server's place: it
// gets the model and a results directory, no server URL.
func customJob(w schema.Workload, j schema.CustomJob) *CustomRun {
	r := &CustomRun{Name: "job", Where: j.Where, Dir: "custom-job"}
	if r.Where == "" {
		r.Where = "gpus"
	}
	for _, k := range slices.Sorted(maps.Keys(j.Env)) {
		r.Env = append(r.Env, EnvVar{Name: k, Value: j.Env[k]})
	}
	r.Env = append(r.Env,
		EnvVar{Name: "WLC_MODEL", Value: w.Model},
		EnvVar{Name: "WLC_STEP_DIR", Value: ResultsDir + "/" + r.Dir})
	if len(j.Command) > 0 {
		r.Argv = append([]string(nil), j.Command...)
	} else {
		r.Argv = []string{"bash", "-c", j.Script, "custom-job"}
	}
	return r
}

func customRun(w schema.Workload, s schema.CustomStep) CustomRun {
	r := CustomRun{Name: s.Name, Where: s.Where, Dir: "custom-" + s.Name}
	if r.Where == "" {
		r.Where = "server"
	}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		r.Env = append(r.Env, EnvVar{Name: k, Value: s.Env[k]})
	}
	r.Env = append(r.Env,
		EnvVar{Name: "WLC_BASE_URL", Value: BaseURL},
		EnvVar{Name: "WLC_MODEL", Value: w.Model},
		EnvVar{Name: "WLC_STEP_DIR", Value: ResultsDir + "/" + r.Dir})
	if len(s.Command) > 0 {
		r.Argv = append([]string(nil), s.Command...)
	} else {
		r.Argv = []string{"bash", "-c", s.Script, s.Name}
	}
	return r
}

// truthy reads a boolean environment variable the way perf-eval did
// (1, true, yes; any case).
func truthy(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes":
		return true
	}
	return false
}

// PlatformOf maps a hardware vendor to the vLLM image platform.
func PlatformOf(vendor string) string {
	switch vendor {
	case "amd":
		return "rocm"
	case "intel":
		return "xpu"
	}
	return "cuda"
}

func mergeEnv(prof schema.Profile, w schema.Workload) []EnvVar {
	m := map[string]string{}
	for k, v := range prof.Env {
		m[k] = v
	}
	for k, v := range w.Env {
		m[k] = v
	}
	if _, set := m["HF_HOME"]; !set && prof.HFHome != "" {
		m["HF_HOME"] = prof.HFHome
	}
	// vLLM gives up on a loading engine after VLLM_ENGINE_READY_TIMEOUT_S
	// (600 s by default), long before a big checkpoint's startup budget;
	// perf-eval passed 3600 and the B300 branch its startup timeout.
	if _, set := m["VLLM_ENGINE_READY_TIMEOUT_S"]; !set && w.Engine != schema.EngineSGLang {
		m["VLLM_ENGINE_READY_TIMEOUT_S"] = strconv.Itoa(w.StartupTimeoutS)
	}
	out := make([]EnvVar, 0, len(m))
	for k, v := range m {
		out = append(out, EnvVar{Name: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func uniqueSorted(in []string) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// serveArgs renders the typed serve options in cmdline.VLLMServe's order
// (model, then parallelism, then the rest as vLLM groups them), extra_args
// last.
func serveArgs(w schema.Workload) Serve {
	s := w.Serve
	a := append([]string{w.Model}, cmdline.VLLMServe.Render(cmdline.Fields("serve.", s))...)
	a = append(a, s.Options...)
	a = append(a, s.ExtraArgs...)
	return Serve{
		Command:              []string{"vllm", "serve"},
		Args:                 a,
		TensorParallelSize:   s.TensorParallelSize,
		DataParallelSize:     s.DataParallelSize,
		PipelineParallelSize: s.PipelineParallelSize,
		ExpertParallel:       s.EnableExpertParallel,
	}
}

// sweep expands one config over its concurrency sweep: args gives each
// run's client arguments from its concurrency and prompt count.
func sweep(name string, conc, prompts schema.IntOrList, reps int, args func(conc, np int) []string) []BenchRun {
	var out []BenchRun
	for i, c := range conc.Values {
		np := prompts.Values[0]
		if len(prompts.Values) == len(conc.Values) {
			np = prompts.Values[i]
		}
		run := BenchRun{Name: fmt.Sprintf("%s-conc-%d", name, c), Config: name, MaxConcurrency: c, NumPrompts: np, Repetitions: reps, Args: args(c, np)}
		run.Result = "bench-" + run.Name + ".json"
		if reps > 1 {
			for r := 1; r <= reps; r++ {
				run.RunFiles = append(run.RunFiles, fmt.Sprintf("bench-%s-run-%d.json", run.Name, r))
			}
		} else {
			run.RunFiles = []string{run.Result}
		}
		out = append(out, run)
	}
	return out
}

// allowFailed records a config's opt-out from failing on failed requests
// on its runs.
func allowFailed(a *schema.AllowFailedRequests, runs []BenchRun) []BenchRun {
	if a != nil {
		for i := range runs {
			runs[i].AllowFailedRequests = a.Reason
		}
	}
	return runs
}

// lengths records a config's input and output lengths on its runs (the
// dashboards' isl and osl).
func lengths(in, out int, runs []BenchRun) []BenchRun {
	for i := range runs {
		runs[i].InputLen, runs[i].OutputLen = in, out
	}
	return runs
}

// sglangServe renders the SGLang server: --model-path, the typed options
// in cmdline.SGLangServe's order, extra_args last.
func sglangServe(w schema.Workload) Serve {
	s := w.SGLang
	if s == nil {
		s = &schema.SGLangServe{TPSize: 1, PPSize: 1, DPSize: 1, EPSize: 1}
	}
	a := append([]string{"--model-path", w.Model}, cmdline.SGLangServe.Render(cmdline.Fields("sglang.", s))...)
	a = append(a, s.ExtraArgs...)
	dp := s.DPSize
	if s.EnableDPAttention {
		dp = 1 // the attention groups share the tensor-parallel GPUs
	}
	return Serve{
		Command:              []string{"python3", "-m", "sglang.launch_server"},
		Args:                 a,
		TensorParallelSize:   s.TPSize,
		DataParallelSize:     dp,
		PipelineParallelSize: s.PPSize,
		ExpertParallel:       s.EPSize > 1,
	}
}

// sglangBenchRuns expands every sglang_bench config the way perf-eval ran
// bench_serving: the random dataset at exactly input_len/output_len
// tokens (--random-range-ratio 1.0), 64 warmup requests, a cache flush.
func sglangBenchRuns(w schema.Workload) []BenchRun {
	var out []BenchRun
	for _, c := range w.SGLangBench.Configs {
		out = append(out, allowFailed(c.AllowFailedRequests, lengths(c.InputLen, c.OutputLen, sweep(c.Name, c.MaxConcurrency, c.NumPrompts, c.Repetitions, func(conc, np int) []string {
			args := []string{"--backend", c.Backend, "--model", w.Model,
				"--dataset-name", "random",
				"--random-input-len", strconv.Itoa(c.InputLen),
				"--random-output-len", strconv.Itoa(c.OutputLen),
				"--random-range-ratio", "1.0",
				"--warmup-requests", "64",
				"--flush-cache",
				"--num-prompts", strconv.Itoa(np), "--max-concurrency", strconv.Itoa(conc)}
			return append(args, BenchArgs(c.Args)...)
		})))...)
	}
	return out
}

// benchRuns expands every config over its concurrency sweep.
func benchRuns(w schema.Workload) []BenchRun {
	var out []BenchRun
	for _, c := range w.VLLMBench.AllConfigs() {
		var ds *Dataset
		runs := lengths(c.InputLen, c.OutputLen, sweep(c.Name, c.MaxConcurrency, c.NumPrompts, c.Repetitions, func(conc, np int) []string {
			args := []string{"--model", w.Model}
			if c.Backend != "" {
				args = append(args, "--backend", c.Backend)
				if c.Backend == "openai-chat" {
					args = append(args, "--endpoint", "/v1/chat/completions")
				}
			}
			switch c.Dataset {
			case "speed_bench":
				// vLLM's SpeedBench reads <dataset-path>/<subset>.jsonl, which
				// the job prepares (it does not download the dataset), and
				// counts tokens on the server: SPEED-Bench's client-side chat
				// template breaks for models without one (perf-eval).
				ds = speedBench(c.SpeedBenchDatasetSubset, c.SpeedBenchCategory)
				args = append(args, "--dataset-name", "speed_bench", "--dataset-path", ds.Path,
					"--speed-bench-dataset-subset", c.SpeedBenchDatasetSubset)
				if c.SpeedBenchCategory != "" {
					args = append(args, "--speed-bench-category", c.SpeedBenchCategory)
				}
				args = append(args, "--speed-bench-output-len", strconv.Itoa(c.OutputLen), "--skip-tokenizer-init")
			default:
				args = append(args, "--dataset-name", "random",
					"--random-input-len", strconv.Itoa(c.InputLen),
					"--random-output-len", strconv.Itoa(c.OutputLen),
					"--ignore-eos")
			}
			args = append(args, "--num-prompts", strconv.Itoa(np), "--max-concurrency", strconv.Itoa(conc))
			if w.Serve.TrustRemoteCode {
				args = append(args, "--trust-remote-code")
			}
			return append(args, BenchArgs(c.Args)...)
		}))
		for i := range runs {
			runs[i].Dataset = ds
		}
		out = append(out, allowFailed(c.AllowFailedRequests, runs)...)
	}
	return out
}

// BenchArgs renders extra `vllm bench serve` options: keys normalized to
// dashed long names and sorted; true is a bare flag, false and null omit
// the flag, a list repeats it, a struct becomes compact JSON.
func BenchArgs(args map[string]any) []string {
	keys := make([]string, 0, len(args))
	norm := map[string]any{}
	for k, v := range args {
		n := BenchArgName(k)
		norm[n] = v
		keys = append(keys, n)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		switch v := norm[k].(type) {
		case nil:
		case bool:
			if v {
				out = append(out, "--"+k)
			}
		case []any:
			for _, e := range v {
				out = append(out, "--"+k, cmdline.Token(e))
			}
		default:
			out = append(out, "--"+k, cmdline.Token(v))
		}
	}
	return out
}

// BenchArgName is the option name an args key renders as (after "--").
func BenchArgName(key string) string {
	return strings.ReplaceAll(strings.TrimLeft(key, "-"), "_", "-")
}

func lmEvalRuns(w schema.Workload) []LMEvalRun {
	var out []LMEvalRun
	for _, t := range w.LMEval.Tasks {
		merged := map[string]any{}
		for k, v := range w.LMEval.ModelArgs {
			merged[k] = v
		}
		for k, v := range t.ModelArgs {
			merged[k] = v
		}
		// model and base_url lead; the rest sorted, rendered the way
		// lm-eval parses them (Python literals for True/False/None).
		kv := []string{"model=" + w.Model, "base_url=" + BaseURL + "/v1/completions"}
		for _, k := range slices.Sorted(maps.Keys(merged)) {
			if _, owned := OwnedModelArgs[k]; owned {
				continue // refused by vet; never rendered twice
			}
			kv = append(kv, k+"="+pyLiteral(merged[k]))
		}
		dir := "lm_eval/" + t.Name
		out = append(out, LMEvalRun{
			Task:      t.Name,
			OutputDir: dir,
			Argv: []string{
				"python3", "-m", "lm_eval", "--model", "local-completions",
				"--model_args", strings.Join(kv, ","),
				"--tasks", t.Name,
				"--num_fewshot", strconv.Itoa(t.NumFewshot),
				"--output_path", ResultsDir + "/" + dir,
				"--log_samples",
			},
		})
	}
	return out
}

func bfclRuns(w schema.Workload) []BFCLRun {
	b := w.BFCL
	var out []BFCLRun
	for _, c := range b.TestCategories {
		r := BFCLRun{Category: c, MaximumStepLimit: b.MaximumStepLimit}
		switch m := b.MaxTestCases.(type) {
		case int:
			r.MaxTestCases = m
		case int64:
			r.MaxTestCases = int(m)
		case float64:
			r.MaxTestCases = int(m)
		case map[string]any:
			if v, ok := m[c]; ok {
				r.MaxTestCases = toInt(v)
			}
		}
		r.Argv = []string{
			"--model", w.Model,
			"--category", c,
			"--base-url", BaseURL,
			"--results-dir", ResultsDir,
			"--num-threads", strconv.Itoa(b.NumThreads),
			"--temperature", cmdline.Token(b.Temperature),
			"--maximum-step-limit", strconv.Itoa(b.MaximumStepLimit),
		}
		if r.MaxTestCases > 0 {
			r.Argv = append(r.Argv, "--max-test-cases", strconv.Itoa(r.MaxTestCases))
		}
		out = append(out, r)
	}
	return out
}

func toInt(v any) int {
	switch x := v.(type) {
	case int:
		return x
	case int64:
		return int(x)
	case float64:
		return int(x)
	}
	return 0
}

// datasets are the SPEED-Bench parts the bench runs read, each once, in
// the order of the first run reading it.
func datasets(runs []BenchRun) []Dataset {
	var out []Dataset
	seen := map[string]bool{}
	for _, r := range runs {
		if r.Dataset == nil || seen[r.Dataset.Name] {
			continue
		}
		seen[r.Dataset.Name] = true
		out = append(out, *r.Dataset)
	}
	return out
}

// speedBench is where a SPEED-Bench part is prepared: perf-eval's layout,
// <data dir>/<subset>[-<category>].
func speedBench(subset, category string) *Dataset {
	d := &Dataset{Name: "speed_bench/" + subset, Subset: subset, Category: category, Path: DataDir + "/speed_bench/" + subset}
	if category != "" {
		d.Name += "/" + category
		d.Path += "-" + category
	}
	return d
}

func pyLiteral(v any) string {
	switch x := v.(type) {
	case bool:
		if x {
			return "True"
		}
		return "False"
	case nil:
		return "None"
	}
	return cmdline.Token(v)
}

var (
	nightlySHA = regexp.MustCompile(`^nightly-([0-9a-f]{7,40})$`)
	anySHA     = regexp.MustCompile(`(?:^|[-_.])([0-9a-f]{12,40})(?:$|[-_.])`)
)

// CommitFromImage finds the vLLM commit in an image tag: nightly-<sha>
// first, else any 12-40 hex run delimited by - _ or . (perf-eval §3.5).
func CommitFromImage(image string) string {
	ref := image
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	slash := strings.LastIndex(ref, "/")
	colon := strings.LastIndex(ref, ":")
	if colon <= slash {
		return ""
	}
	tag := ref[colon+1:]
	if m := nightlySHA.FindStringSubmatch(tag); m != nil {
		return m[1]
	}
	if m := anySHA.FindStringSubmatch(tag); m != nil {
		return m[1]
	}
	return ""
}

// ecrPublic is rewritten to the private pull-through cache on profiles
// that use it (perf-eval #11: public ECR rate-limited B200 pods).
const (
	ecrPublic      = "public.ecr.aws/"
	ecrPullThrough = "936637512419.dkr.ecr.us-west-2.amazonaws.com/vllm-ci-pull-through-cache/"
)

// PullRef applies the ECR pull-through rewrite when the profile uses it.
func PullRef(ref string, prof schema.Profile) string {
	if prof.ECRPullThroughCache && prof.Runtime == "k8s" && strings.HasPrefix(ref, ecrPublic) {
		return ecrPullThrough + strings.TrimPrefix(ref, ecrPublic)
	}
	return ref
}

// ResolveImage picks the image by perf-eval's precedence (§3.5, with the
// per-platform pins of #63):
//  1. pin_image with an explicit image wins over everything;
//  2. VLLM_IMAGE_<PLATFORM> for this platform; when only other platforms
//     are pinned and VLLM_IMAGE is unset, the step is skipped;
//  3. VLLM_IMAGE, unless it is built for another platform (a CUDA image
//     never runs on ROCm or XPU): then VLLM_COMMIT, if set, selects this
//     platform's nightly, else rule 5;
//  4. VLLM_COMMIT: <image_repo>:nightly-<commit>;
//  5. the workload's image, else <image_repo>:nightly.
func ResolveImage(w schema.Workload, prof schema.Profile, platform string, ov Overrides) Image {
	repo := prof.ImageRepo
	if repo == "" {
		repo = "vllm/vllm-openai"
	}
	fallback := func() Image {
		if w.Image != "" {
			return Image{Ref: w.Image, Commit: CommitFromImage(w.Image), Source: "workload image"}
		}
		return Image{Ref: repo + ":nightly", Source: "default (" + repo + ":nightly)"}
	}
	fromCommit := func() Image {
		return Image{Ref: repo + ":nightly-" + ov.VLLMCommit, Commit: ov.VLLMCommit, Source: "VLLM_COMMIT"}
	}
	var img Image
	pins := map[string]string{"cuda": ov.VLLMImageCUDA, "rocm": ov.VLLMImageROCm, "xpu": ov.VLLMImageXPU}
	switch {
	case w.PinImage && w.Image != "":
		img = Image{Ref: w.Image, Commit: CommitFromImage(w.Image), Source: "pin_image"}
	case pins[platform] != "":
		ref := pins[platform]
		commit := ov.VLLMCommit
		if commit == "" {
			commit = CommitFromImage(ref)
		}
		img = Image{Ref: ref, Commit: commit, Source: "VLLM_IMAGE_" + strings.ToUpper(platform)}
	case ov.VLLMImage == "" && (ov.VLLMImageCUDA != "" || ov.VLLMImageROCm != "" || ov.VLLMImageXPU != ""):
		img = fallback()
		img.Skip = fmt.Sprintf("no %s image: set VLLM_IMAGE_%s", strings.ToUpper(platform), strings.ToUpper(platform))
	case ov.VLLMImage != "" && (platform == "cuda" || strings.Contains(strings.ToLower(ov.VLLMImage), platform)):
		commit := ov.VLLMCommit
		if commit == "" {
			commit = CommitFromImage(ov.VLLMImage)
		}
		img = Image{Ref: ov.VLLMImage, Commit: commit, Source: "VLLM_IMAGE"}
	case ov.VLLMCommit != "":
		img = fromCommit()
	default:
		img = fallback()
	}
	img.Pull = PullRef(img.Ref, prof)
	return img
}

// DefaultSGLangImage is perf-eval's SGLang image when neither SGLANG_IMAGE
// nor the workload names one.
const DefaultSGLangImage = "lmsysorg/sglang:latest"

// ResolveSGLangImage picks an SGLang workload's image as perf-eval did:
// SGLANG_IMAGE, else the workload's image, else lmsysorg/sglang:latest.
// The VLLM_* overrides are vLLM builds and never apply.
func ResolveSGLangImage(w schema.Workload, prof schema.Profile, ov Overrides) Image {
	var img Image
	switch {
	case ov.SGLangImage != "":
		img = Image{Ref: ov.SGLangImage, Source: "SGLANG_IMAGE"}
	case w.Image != "":
		img = Image{Ref: w.Image, Source: "workload image"}
	default:
		img = Image{Ref: DefaultSGLangImage, Source: "default (" + DefaultSGLangImage + ")"}
	}
	img.Pull = PullRef(img.Ref, prof)
	return img
}
