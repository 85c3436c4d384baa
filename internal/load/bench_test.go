package load_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"cuelang.org/go/cue/cuecontext"

	"github.com/wlcdev/wlc/internal/load"
	"github.com/wlcdev/wlc/internal/plan"
)

const benchProfiles = `package workloads

profiles: {
	H200: {hardware: "H200", runtime: "docker", queue: "h200", hf_home: "/mnt/hf", env: VLLM_DEEP_GEMM_WARMUP: "skip", docker: {}}
	B200: {hardware: "B200", runtime: "k8s", queue: "b200", env: NCCL_CUMEM_HOST_ENABLE: "0", k8s: plugin: "nvidia"}
	MI300X: {hardware: "MI300X", runtime: "k8s", queue: "mi300x", ecr_pull_through_cache: false, k8s: plugin: "amd"}
	GB300: {hardware: "GB300", runtime: "slurm", queue: "gb300", slurm: {max_nodes: 4, partition: "gpu", pyxis: mounts: [{source: "/lustre", target: "/lustre"}]}}
}
`

// genWorkload is the i-th generated workload: four shapes across the
// runtimes, with sweeps, lm_eval, bfcl, env and extra args.
func genWorkload(i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "workloads: w%04d: {\n", i)
	switch i % 4 {
	case 0:
		b.WriteString(`	profile:       "H200"
	gpus_per_node: 8
	nightly:       true
	model:         "meta-llama/Llama-3.1-70B-Instruct"
	precision:     "bf16"
	env: VLLM_LOGGING_LEVEL: "INFO"
	serve: {tensor_parallel_size: 8, max_model_len: 32768, gpu_memory_utilization: 0.9, enable_prefix_caching: true}
	lm_eval: {
		model_args: {tokenized_requests: false, timeout: 6000}
		tasks: [{name: "gsm8k", num_fewshot: 5}, {name: "mmlu_pro", model_args: num_concurrent: 64}]
	}
`)
	case 1:
		b.WriteString(`	profile:       "B200"
	gpus_per_node: 8
	model:         "nvidia/Qwen3-235B-A22B-NVFP4"
	precision:     "nvfp4"
	params_b:      235
	serve: {tensor_parallel_size: 4, data_parallel_size: 2, enable_expert_parallel: true, kv_cache_dtype: "fp8", max_num_seqs: 256, compilation_config: {cudagraph_mode: "FULL_AND_PIECEWISE"}, extra_args: ["--max-cudagraph-capture-size", "512"]}
	vllm_bench: {
		metadata: {team: "perf", run: ` + strconv.Itoa(i) + `}
		configs: [{name: "1k1k", backend: "openai", input_len: 1024, output_len: 1024, max_concurrency: [16, 64, 256], num_prompts: [64, 256, 1024], repetitions: 3, args: {"request-rate": 10}}]
	}
`)
	case 2:
		b.WriteString(`	profile:       "MI300X"
	gpus_per_node: 8
	model:         "Qwen/Qwen3-30B-A3B-FP8"
	precision:     "fp8"
	serve: {tensor_parallel_size: 8, tool_call_parser: "hermes", enable_auto_tool_choice: true, reasoning_parser: "qwen3"}
	lm_eval: tasks: [{name: "gsm8k"}]
	bfcl: {test_categories: ["simple_python", "multiple", "parallel"], max_test_cases: 50}
`)
	case 3:
		b.WriteString(`	profile:       "GB300"
	nodes:         2
	gpus_per_node: 4
	model:         "openai/gpt-oss-120b"
	precision:     "mxfp4"
	serve: {tensor_parallel_size: 4, pipeline_parallel_size: 2}
	vllm_bench: configs: [
		{name: "8k1k", input_len: 8192, output_len: 1024, max_concurrency: 64, num_prompts: 128},
		{name: "speed", dataset: "speed_bench", input_len: 1, output_len: 512, max_concurrency: [32, 64], num_prompts: 128},
	]
	lm_eval: tasks: [{name: "gpqa_diamond_cot_zeroshot"}]
`)
	}
	b.WriteString("}\n")
	return b.String()
}

// writeBenchPkg writes n generated workloads into files of 50 each.
func writeBenchPkg(tb testing.TB, n int) string {
	files := map[string]string{"workloads/profiles.cue": benchProfiles}
	for f := 0; f*50 < n; f++ {
		var b strings.Builder
		b.WriteString("package workloads\n\n")
		for i := f * 50; i < n && i < (f+1)*50; i++ {
			b.WriteString(genWorkload(i))
		}
		files[fmt.Sprintf("workloads/gen_%02d.cue", f)] = b.String()
	}
	return writePkg(tb, files)
}

// loadAndResolve is what wlc does before any backend runs: load, validate
// and resolve every workload.
func loadAndResolve(tb testing.TB, root string, n int) {
	r := load.Load(cuecontext.New(), filepath.Join(root, "workloads"), root)
	if r.Diags.HasErrors() || len(r.Workloads) != n {
		tb.Fatalf("want %d clean workloads, got %d:\n%s", n, len(r.Workloads), strings.Join(diagLines(r), "\n"))
	}
	cat := plan.Catalog{Profiles: r.Profiles, Hardware: r.Hardware, Architectures: r.Architectures}
	for _, w := range r.Workloads {
		if _, err := plan.Resolve(w.Workload, w.File, cat, plan.Overrides{}); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkLoad loads, validates and resolves 1,000 generated workloads
// in one package. Target: ≤ 1 ms per workload.
func BenchmarkLoad(b *testing.B) {
	const n = 1000
	root := writeBenchPkg(b, n)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		loadAndResolve(b, root, n)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/n, "ms/workload")
	if hwm := vmHWM(); hwm > 0 {
		b.ReportMetric(float64(hwm)/1024, "MB-peak-RSS")
	}
}

// vmHWM is the process's peak resident set in KiB (Linux), or 0.
func vmHWM() int {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil || runtime.GOOS != "linux" {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.Atoi(f[1])
			return kb
		}
	}
	return 0
}

// TestGeneratedWorkloadsVet keeps the benchmark's generator valid (a
// benchmark of failing loads would measure the error path).
// WLC_BENCH_DIR=dir also copies the 1,000-workload package there, to
// measure the CLI (e.g. /usr/bin/time -v wlc vet dir/workloads).
func TestGeneratedWorkloadsVet(t *testing.T) {
	loadAndResolve(t, writeBenchPkg(t, 8), 8)
	if dir := os.Getenv("WLC_BENCH_DIR"); dir != "" {
		if err := os.CopyFS(dir, os.DirFS(writeBenchPkg(t, 1000))); err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkEvaluationFloor measures what a sharded load costs beyond
// CUE's evaluation: the load of 1,000 generated workloads, one file each
// (as wlcbench's), whole and stopped once each shard is evaluated
// (nothing validated, decoded or checked), alternating. evaluation/whole
// times wlcbench's `wlc vet / cue vet -c` is the ratio wlc would reach if
// reading the evaluated values cost nothing: issue 14's bound
// (docs/performance.md).
func BenchmarkEvaluationFloor(b *testing.B) {
	const n = 1000
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("workloads/w%04d.cue", i)] = "package workloads\n\n" + genWorkload(i)
	}
	root := writePkg(b, files)
	dir := filepath.Join(root, "workloads")
	defer debug.SetGCPercent(debug.SetGCPercent(300)) // as the wlc command runs
	var whole, eval time.Duration
	for b.Loop() {
		start := time.Now()
		r := load.Load(cuecontext.New(), dir, root)
		mid := time.Now()
		e := load.Load(cuecontext.New(), dir, root, load.WithEvaluateOnly(load.Options{}))
		whole, eval = whole+mid.Sub(start), eval+time.Since(mid)
		if r.Diags.HasErrors() || len(r.Workloads) != n || r.Shards() < 2 {
			b.Fatalf("whole load: %d workloads in %d shards, want %d in several:\n%s", len(r.Workloads), r.Shards(), n, strings.Join(diagLines(r), "\n"))
		}
		if e.Diags.HasErrors() || len(e.Workloads) != 0 || e.Shards() != r.Shards() {
			b.Fatalf("evaluation only: %d workloads in %d shards, want none in %d", len(e.Workloads), e.Shards(), r.Shards())
		}
	}
	b.ReportMetric(float64(whole.Milliseconds())/float64(b.N), "whole-ms/op")
	b.ReportMetric(float64(eval.Milliseconds())/float64(b.N), "evaluation-ms/op")
	b.ReportMetric(float64(eval)/float64(whole), "evaluation/whole")
}
