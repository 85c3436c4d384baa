// Package dashboard holds the facts about the perf and eval dashboards'
// ingest endpoints that every sender shares: the job script
// (backends/runner) and `wlc ingest` (internal/results/ingest). They are
// perf-eval's (lib/ingest_perf.py, lib/ingest.py).
package dashboard

// Default endpoints, used when the environment names none.
const (
	PerfURL = "https://vllm-perf-data-ingest-224810116257.us-central1.run.app/"
	EvalURL = "https://vllm-eval-data-ingest-224810116257.us-central1.run.app/"
)

// Environment variables a sender reads.
const (
	// PerfURLEnv and EvalURLEnv override the endpoints.
	PerfURLEnv = "PERF_INGEST_URL"
	EvalURLEnv = "INGEST_URL"
	// TokenEnv is the bearer token; Buildkite steps fetch it from the
	// agent's secret store under this name.
	TokenEnv = "INGEST_BEARER_TOKEN"
	// NightlyEnv=1 tags every row nightly: true (the dashboard's /nightly
	// view pairs adjacent nightlies on it).
	NightlyEnv = "NIGHTLY"
	// NoSamplesEnv, when non-empty, skips lm_eval's per-sample rows.
	NoSamplesEnv = "INGEST_NO_SAMPLES"
)

// PerfSource is the X-Source header perf rows carry.
const PerfSource = "perf-eval"

// TimeoutS bounds one POST, in seconds.
const TimeoutS = 30

// Where a run's rows are kept, below its results directory: one JSON body
// per file, perf rows in PerfDir, eval rows in EvalDir.
const (
	Dir     = "ingest"
	PerfDir = Dir + "/perf"
	EvalDir = Dir + "/eval"
)
