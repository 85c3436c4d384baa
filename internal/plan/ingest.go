package plan

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/wlcdev/wlc/schema"
)

// Ingest is what a job tells the perf and eval dashboards besides what it
// measured (perf-eval's lib/ingest_perf.py and lib/ingest.py arguments).
type Ingest struct {
	// Workload is the dashboards' name for the workload (eval rows'
	// workload field).
	Workload string
	// Perf are the perf row fields known before the run.
	Perf PerfRow
	// Shapes is the compact description of the row definitions of
	// schema/ingest.cue (internal/results/ingest.Shapes), which the job checks
	// every row against before sending it. The loader sets it; without it
	// the job sends nothing.
	Shapes string
}

// PerfRow are the fields of a perf dashboard row that the workload
// decides; the job adds the date, the measurements and the nightly tag.
// Model and Conc are fallbacks for a result that lacks model_id or
// max_concurrency. The JSON names are the dashboard's columns.
type PerfRow struct {
	Device       string `json:"device"`
	Image        string `json:"image"`
	Model        string `json:"model"`
	Framework    string `json:"framework"`
	Precision    string `json:"precision"`
	SpecDecoding string `json:"spec_decoding"`
	Disagg       string `json:"disagg"`
	IsMultinode  string `json:"is_multinode"`
	// TP is perf-eval's effective parallel degree: tensor × data parallel.
	TP          int    `json:"tp"`
	EP          int    `json:"ep"`
	DPAttention string `json:"dp_attention"`
	DP          int    `json:"dp"`
	NumNodes    int    `json:"num_nodes"`
	GPUsPerNode int    `json:"gpus_per_node"`
	// GPUCount divides every throughput: the GPUs the serving instances
	// use (ServingGPUs), never reserved ones left idle.
	GPUCount int `json:"gpu_count"`
	ISL      int `json:"isl"`
	OSL      int `json:"osl"`
	Conc     int `json:"conc"`
}

// Run is the row of one benchmark run.
func (r PerfRow) Run(b BenchRun) PerfRow {
	r.ISL, r.OSL, r.Conc = b.InputLen, b.OutputLen, b.MaxConcurrency
	return r
}

// ingestTags derives the dashboard fields from the resolved workload p
// and what its engine's typed fields say it runs (w). Free-form
// vllm_bench.metadata tags override the tags perf-eval let them override
// (device, precision, tp, ep, dp, and the three flags); the server's shape
// (GPU count, nodes, GPUs per node, multi-node) is typed and always the
// workload's own.
func ingestTags(p Workload, w schema.Workload) Ingest {
	md := p.BenchMetadata
	text := func(key, def string) string {
		if v, ok := md[key]; ok {
			if s := strings.TrimSpace(fmt.Sprint(v)); s != "" {
				return s
			}
		}
		return def
	}
	num := func(key string, def int) int {
		if n, err := strconv.Atoi(text(key, "")); err == nil && n > 0 {
			return n
		}
		return def
	}
	flag := func(key string, def bool) string {
		switch strings.ToLower(text(key, strconv.FormatBool(def))) {
		case "1", "true", "yes":
			return "true"
		}
		return "false"
	}
	s := p.Serve
	ep, dpAttention, spec := 1, false, w.Serve.SpeculativeConfig != nil
	if d := w.Disagg; d != nil {
		spec = spec || d.Prefill.Serve.SpeculativeConfig != nil || d.Decode.Serve.SpeculativeConfig != nil
	}
	if g := w.SGLang; p.Engine == schema.EngineSGLang && g != nil {
		ep, dpAttention, spec = max(g.EPSize, 1), g.EnableDPAttention, g.SpeculativeAlgorithm != ""
	}
	return Ingest{
		Workload: p.RunName,
		Perf: PerfRow{
			Device:       text("device", strings.ToLower(p.Profile.Name)),
			Image:        p.Image.Ref,
			Model:        p.Model,
			Framework:    p.Engine,
			Precision:    text("precision", PrecisionTag(p.Precision)),
			SpecDecoding: flag("spec_decoding", spec),
			Disagg:       flag("disagg", p.Disagg != nil),
			IsMultinode:  strconv.FormatBool(p.Nodes > 1),
			TP:           num("tp", max(s.TensorParallelSize, 1)*max(s.DataParallelSize, 1)),
			EP:           num("ep", ep),
			DPAttention:  flag("dp_attention", dpAttention),
			DP:           num("dp", max(s.DataParallelSize, 1)),
			NumNodes:     p.Nodes,
			GPUsPerNode:  p.GPUsPerNode,
			GPUCount:     ServingGPUs(p),
		},
	}
}

// ServingGPUs are the GPUs the serving instances use, the divisor of the
// dashboards' per-GPU throughputs (perf-eval divided by the server's
// tensor × data parallel GPUs): tensor × data × pipeline parallel, summed
// over every instance of every role on every node. GPUs a workload
// reserves but leaves idle (idle_gpus) serve nothing and are not counted;
// SGLang's DP-attention ranks share the tensor-parallel GPUs (Serve's
// data-parallel size is then 1).
func ServingGPUs(p Workload) int {
	if d := p.Disagg; d != nil {
		n := 0
		for _, in := range d.Instances {
			n += max(in.TensorParallelSize, 1) * max(in.DataParallelSize, 1)
		}
		return n
	}
	s := p.Serve
	return max(s.TensorParallelSize, 1) * max(s.DataParallelSize, 1) * max(s.PipelineParallelSize, 1)
}

// PrecisionTag is the perf dashboard's precision tag for a checkpoint
// precision: perf-eval's rule (the first of fp4, fp8, int4, int8, bf16,
// fp16 that the name contains), applied to the typed precision instead of
// guessed from the model id, so nvfp4, mxfp4 and mxfp4_fp8 are fp4 and
// mxfp8 is fp8.
func PrecisionTag(precision string) string {
	for _, m := range []string{"fp4", "fp8", "int4", "int8", "bf16", "fp16"} {
		if strings.Contains(precision, m) {
			return m
		}
	}
	return "bf16"
}
