package plan

import (
	"fmt"
	"strconv"
	"strings"
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
	// GPUCount divides every throughput: all GPUs the server uses.
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

// ingestTags derives the dashboard fields from the resolved workload.
// Free-form vllm_bench.metadata tags override the tags perf-eval let them
// override (device, precision, tp, ep, dp, and the three flags); the
// server's shape (GPU count, nodes, GPUs per node, multi-node) is typed
// and always the workload's own.
func ingestTags(w Workload) Ingest {
	md := w.BenchMetadata
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
	s := w.Serve
	return Ingest{
		Workload: w.RunName,
		Perf: PerfRow{
			Device:       text("device", strings.ToLower(w.Profile.Name)),
			Image:        w.Image.Ref,
			Model:        w.Model,
			Framework:    w.Engine,
			Precision:    text("precision", PrecisionTag(w.Precision)),
			SpecDecoding: flag("spec_decoding", false),
			Disagg:       flag("disagg", w.Disagg != nil),
			IsMultinode:  strconv.FormatBool(w.Nodes > 1),
			TP:           num("tp", max(s.TensorParallelSize, 1)*max(s.DataParallelSize, 1)),
			EP:           num("ep", 1),
			DPAttention:  flag("dp_attention", false),
			DP:           num("dp", max(s.DataParallelSize, 1)),
			NumNodes:     w.Nodes,
			GPUsPerNode:  w.GPUsPerNode,
			GPUCount:     w.GPUs,
		},
	}
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
