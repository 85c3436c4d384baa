// Package stub holds stand-ins for the programs wlc's job scripts run on a
// GPU host, so tests run the generated scripts for real on any machine:
//
//	vllm         vllm serve (a tiny OpenAI-compatible server) and vllm bench serve
//	vllm-router  the PD router: vllm-router's command line, two-stage routing
//	sglang       sglang launch_server and sglang bench_serving, what
//	             `python3 -m sglang.launch_server` / `python3 -m
//	             sglang.bench_serving` run
//	python3      an interpreter with sglang installed: -m sglang.<module> runs
//	             the sglang stub, -m venv makes a venv with the fake pip,
//	             anything else the next python3 on PATH
//	lm_eval      lm-eval's command line (argparse's rules); one completion
//	             per task, results as lm-eval writes them
//	bfcl         BFCL's command line (click's rules) and model table:
//	             generate / evaluate against OPENAI_BASE_URL, BFCL's scores
//	docker       a fake docker CLI running the stub vllm as the "container"
//	python/      Python stand-ins: lm_eval and bfcl_eval packages that run
//	             the two above, and a fake pip (python/README.md)
//
// Build them with Build; put the directory first on PATH. Every stub
// records how it was called (argv, env, pid) as JSON in $WLC_STUB_LOG (one
// file per process, read them with Records); the fake docker also appends
// each argv to $WLC_FAKE_DOCKER_STATE/calls.jsonl (read with DockerCalls).
//
// # vllm serve MODEL [flags]
//
// Flags read: --port P (default 8000), --host H (default 0.0.0.0),
// --served-model-name N (what /v1/models lists; default MODEL), --model M
// (instead of the positional model), --headless (no HTTP server: stays alive
// until signalled, like a vLLM worker node), and the multi-node flags
// --nnodes, --node-rank, --master-addr, --master-port,
// --data-parallel-size, --data-parallel-size-local,
// --data-parallel-address, --data-parallel-rpc-port,
// --data-parallel-start-rank (recorded in the record's Flags; every other
// flag is accepted and kept in Argv). Serves GET /health, GET /v1/models,
// POST /v1/completions and POST /v1/chat/completions. SIGTERM/SIGINT exit 0.
//
// `vllm --version` prints the image's vLLM version and `vllm serve
// --help=all` (or --help) its options in argparse's format, from the
// built-in catalogs (internal/engine/vllmcatalog): WLC_STUB_VLLM_VERSION
// (default 0.13.0) picks the release's catalog when wlc has it, else every
// option wlc knows; WLC_STUB_VLLM_LACKS=--a,--b takes options away (help
// omits them and serve refuses them at once, status 2, as argparse does).
// WLC_STUB_SERVER_IMPORTS=numpy,... records the version of each module the
// server's python3 imports (Flags import:<module>). vllm serve binds its
// port at once as vLLM does (SO_REUSEADDR and SO_REUSEPORT: another server
// of this user binds it too) and listens after the startup delay. The
// server records mode "ready" when it listens and, when SIGTERM/SIGINT stops it, mode "stopped"
// (Flags: requests, first_request, last_request).
//
// Environment: WLC_STUB_STARTUP_DELAY=<seconds> (before listening, like
// model loading), WLC_STUB_LISTEN_ON_FILE=<path> (vllm serve listens only
// once path exists, after the delay), WLC_STUB_DIE_AFTER=<seconds> (then exit
// WLC_STUB_DIE_CODE, default 3), WLC_STUB_DIE_AFTER_REQUESTS=<n> (exit
// WLC_STUB_DIE_CODE after answering n completion requests),
// WLC_STUB_DIE_ON_FILE=<path> (exit WLC_STUB_DIE_CODE once path exists),
// WLC_STUB_WORKERS=<n> (start n worker processes, recorded as mode
// "worker", that outlive the server unless its process group is killed),
// WLC_STUB_IGNORE_TERM=1 (ignore SIGTERM/SIGINT: only SIGKILL stops it),
// WLC_STUB_REFUSE_BACKENDS=A,B (exit 1 with a ValueError when
// --attention-backend or --moe-backend names one of them, as vLLM refuses a
// backend the platform lacks; both flags are recorded in Flags),
// WLC_STUB_DIE_KV_ROLE=<kv_role> (WLC_STUB_DIE_AFTER applies only to servers
// whose --kv-transfer-config has that kv_role), WLC_STUB_FAULT=empty (every
// completion is empty: 0 completion_tokens, finish_reason stop), fail-some
// (every third completion request answers 500, as an engine error does) or
// error (a chat request with tools answers 400, as vLLM started without
// --enable-auto-tool-choice does: what makes every BFCL request fail) or
// oom-loading (serve prints PyTorch's CUDA out-of-memory error while
// loading and exits 1).
// A completion reports max_tokens completion_tokens (as with ignore_eos). --kv-transfer-config must be
// JSON naming a kv_connector (else exit 2); it is recorded with
// data-parallel-hybrid-lb and nixl-side-channel-host
// ($VLLM_NIXL_SIDE_CHANNEL_HOST) in Flags.
//
// # vllm-router [options]
//
// vllm-router's own options, parsed as its clap parser does (unknown
// options, bad choices and bad numbers exit 2); only
// --vllm-pd-disaggregation with --prefill/--decode URLs runs. It records
// mode "route" at start (Flags: host, port, policy,
// intra_node_data_parallel_size, prefill and decode URL lists) and mode
// "served" when SIGTERM/SIGINT stops it (Flags: requests per worker URL).
//
// # python3 -m sglang.launch_server [flags]
//
// Accepts exactly the options of internal/engine/sglang's LaunchServer table (the
// real parser's, with argparse's prefix matching: --tp is --tp-size) and
// refuses anything else with status 2. Reads --model-path (required),
// --host (default 127.0.0.1), --port (default 30000), --served-model-name,
// --node-rank (above 0: no HTTP server, alive until signalled); records
// model, host, port and the parallel, multi-node, KV-cache and memory
// options in Flags. Serves GET /health, GET /v1/models, POST /generate,
// POST /v1/completions, POST /v1/chat/completions and POST /flush_cache.
// Honours WLC_STUB_STARTUP_DELAY, WLC_STUB_DIE_AFTER and WLC_STUB_DIE_CODE.
//
// # python3 -m sglang.bench_serving [flags]
//
// Accepts exactly BenchServing's options. Sends --warmup-requests requests,
// POSTs /flush_cache with --flush-cache, then --num-prompts requests at most
// --max-concurrency at once to the backend's endpoint (sglang: /generate;
// sglang-oai: /v1/completions; sglang-oai-chat: /v1/chat/completions) and
// appends one JSON row with bench_serving's field names (completed,
// duration, output_throughput, mean_ttft_ms, ...) to --output-file.
// WLC_STUB_BENCH_FAIL=<code> exits with that code first.
//
// # vllm bench serve [flags]
//
// Reads --base-url (or --host/--port), --endpoint (default
// /v1/completions), --model, --backend, --num-prompts, --max-concurrency,
// --random-input-len, --random-output-len, --save-result, --result-dir,
// --result-filename. Sends num-prompts requests, at most max-concurrency at
// once, and writes the result JSON with vLLM's field names (completed,
// failed, request_throughput, output_throughput, mean_ttft_ms, ...);
// output tokens are the servers' usage.completion_tokens, summed.
// With --dataset-name speed_bench, <--dataset-path>/<subset>.jsonl must
// exist (vLLM reads it and downloads nothing).
// WLC_STUB_BENCH_FAIL=<code> exits with that code (1 for any non-number)
// before sending anything; WLC_STUB_BENCH_DELAY=<seconds> is the
// benchmark's own time, spent before its requests (lm_eval's is
// WLC_STUB_EVAL_DELAY).
//
// # python3 -m venv [--system-site-packages] DIR
//
// A real CPython venv (the next python3 on PATH makes it, --without-pip),
// then the fake pip where ensurepip puts pip: the package in its
// site-packages, bin/pip, bin/pip3 and bin/pipX.Y (python/README.md).
package stub

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Record is what a stub process writes about itself.
type Record struct {
	Program string            `json:"program"` // vllm, lm_eval, bfcl
	Mode    string            `json:"mode"`    // serve, bench, generate, ...
	PID     int               `json:"pid"`
	Argv    []string          `json:"argv"` // os.Args[1:]
	Env     map[string]string `json:"env"`
	Dir     string            `json:"dir"`
	Flags   map[string]string `json:"flags,omitempty"`
	Time    time.Time         `json:"time"`
}

// Write records r in $WLC_STUB_LOG (no-op when unset).
func Write(program, mode string, flags map[string]string) {
	dir := os.Getenv("WLC_STUB_LOG")
	if dir == "" {
		return
	}
	env := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	wd, _ := os.Getwd()
	r := Record{Program: program, Mode: mode, PID: os.Getpid(), Argv: os.Args[1:], Env: env, Dir: wd, Flags: flags, Time: time.Now()}
	data, _ := json.MarshalIndent(r, "", "  ")
	_ = os.MkdirAll(dir, 0o755)
	name := fmt.Sprintf("%s-%s-%d-%d.json", program, mode, os.Getpid(), time.Now().UnixNano())
	tmp := filepath.Join(dir, "."+name)
	if os.WriteFile(tmp, data, 0o644) == nil {
		_ = os.Rename(tmp, filepath.Join(dir, name))
	}
}

// Records reads every record in dir, oldest first.
func Records(dir string) ([]Record, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var out []Record
	for _, n := range names {
		if strings.HasPrefix(filepath.Base(n), ".") {
			// A record still being written (Write renames it into place),
			// or one whose writer was killed before it could: Glob's *
			// matches a leading dot, as a shell's does not.
			continue
		}
		data, err := os.ReadFile(n)
		if err != nil {
			return nil, err
		}
		var r Record
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, fmt.Errorf("%s: %v", n, err)
		}
		out = append(out, r)
	}
	sortByTime(out)
	return out, nil
}

func sortByTime(rs []Record) {
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && rs[j].Time.Before(rs[j-1].Time); j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
}

// DockerCall is one fake docker invocation.
type DockerCall struct {
	Argv []string  `json:"argv"`
	Time time.Time `json:"time"`
}

// DockerCalls reads $WLC_FAKE_DOCKER_STATE/calls.jsonl.
func DockerCalls(state string) ([]DockerCall, error) {
	data, err := os.ReadFile(filepath.Join(state, "calls.jsonl"))
	if err != nil {
		return nil, err
	}
	var out []DockerCall
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if l == "" {
			continue
		}
		var c DockerCall
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// Flag returns the value after flag in argv ("--x v" or "--x=v").
func Flag(argv []string, flag string) (string, bool) {
	for i, a := range argv {
		if a == flag && i+1 < len(argv) {
			return argv[i+1], true
		}
		if strings.HasPrefix(a, flag+"=") {
			return a[len(flag)+1:], true
		}
	}
	return "", false
}

// Has reports whether argv holds the bare flag.
func Has(argv []string, flag string) bool {
	for _, a := range argv {
		if a == flag {
			return true
		}
	}
	return false
}

// EnvSeconds reads a duration in seconds from the environment (0 when
// unset or not a positive number).
func EnvSeconds(name string) time.Duration {
	f, err := strconv.ParseFloat(os.Getenv(name), 64)
	if err != nil || f <= 0 {
		return 0
	}
	return time.Duration(f * float64(time.Second))
}

// DieCode is the exit status a server stub dies with (WLC_STUB_DIE_CODE,
// default 3).
func DieCode() int {
	if n, err := strconv.Atoi(os.Getenv("WLC_STUB_DIE_CODE")); err == nil {
		return n
	}
	return 3
}

// ImageDigest is the fake docker's registry digest of image
// (sha256:<hex>), derived from its reference so tests can compute it.
func ImageDigest(image string) string {
	sum := sha256.Sum256([]byte("digest:" + image))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// ImageID is the fake docker's image id (its config's digest) of image.
func ImageID(image string) string {
	sum := sha256.Sum256([]byte("id:" + image))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Stats is the mean, median and 99th percentile of sorted latencies, as
// the stand-in benchmarks report them.
func Stats(xs []float64) (mean, median, p99 float64) {
	if len(xs) == 0 {
		return 0, 0, 0
	}
	for _, x := range xs {
		mean += x
	}
	return mean / float64(len(xs)), xs[len(xs)/2], xs[(len(xs)*99)/100]
}
