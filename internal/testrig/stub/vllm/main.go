// Command vllm is a stand-in for vLLM's CLI in tests: `vllm serve` and
// `vllm bench serve`. See package github.com/wlcdev/wlc/internal/testrig/stub for
// the flags and environment it honours.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wlcdev/wlc/internal/testrig/stub"
)

func main() {
	args := os.Args[1:]
	switch {
	case len(args) == 1 && (args[0] == "--version" || args[0] == "-v"):
		fmt.Println(version())
		os.Exit(0)
	case len(args) >= 2 && args[0] == "serve" && (args[1] == "--help=all" || args[1] == "--help" || args[1] == "-h"):
		serveHelp()
		os.Exit(0)
	case len(args) >= 1 && args[0] == "serve":
		os.Exit(serve(args[1:]))
	case len(args) >= 1 && args[0] == "__worker":
		stub.Write("vllm", "worker", nil)
		select {} // like an engine worker: lives until its process group is killed
	case len(args) >= 2 && args[0] == "bench" && args[1] == "serve":
		os.Exit(bench(args[2:]))
	}
	fmt.Fprintf(os.Stderr, "stub vllm: unsupported command %q (want serve or bench serve)\n", args)
	os.Exit(2)
}

// multiNode are the flags recorded for the Slurm backend's tests.
var multiNode = []string{"--nnodes", "--node-rank", "--master-addr", "--master-port",
	"--data-parallel-size", "--data-parallel-size-local", "--data-parallel-address",
	"--data-parallel-rpc-port", "--data-parallel-start-rank", "--tensor-parallel-size",
	"--pipeline-parallel-size", "--distributed-executor-backend", "--api-server-count",
	"--kv-transfer-config"}

func serve(args []string) int {
	if bad := unknownOption(args); bad != "" {
		fmt.Fprintf(os.Stderr, "usage: vllm serve [model_tag] [options]\nvllm serve: error: unrecognized arguments: %s\n", bad)
		return 2
	}
	model := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		model = args[0]
	}
	if m, ok := stub.Flag(args, "--model"); ok {
		model = m
	}
	if model == "" {
		fmt.Fprintln(os.Stderr, "stub vllm serve: no model given")
		return 2
	}
	served := model
	if n, ok := stub.Flag(args, "--served-model-name"); ok {
		served = n
	}
	port := "8000"
	if p, ok := stub.Flag(args, "--port"); ok {
		port = p
	}
	host := "0.0.0.0"
	if h, ok := stub.Flag(args, "--host"); ok {
		host = h
	}
	flags := map[string]string{"model": model, "port": port, "host": host}
	for _, f := range multiNode {
		if v, ok := stub.Flag(args, f); ok {
			flags[strings.TrimPrefix(f, "--")] = v
		}
	}
	kvRole := ""
	if c, ok := stub.Flag(args, "--kv-transfer-config"); ok {
		// vLLM parses it as KVTransferConfig JSON and refuses anything else.
		var cfg struct {
			Connector string `json:"kv_connector"`
			Role      string `json:"kv_role"`
		}
		if err := json.Unmarshal([]byte(c), &cfg); err != nil || cfg.Connector == "" {
			fmt.Fprintf(os.Stderr, "stub vllm serve: --kv-transfer-config %q is not a KV transfer config (%v)\n", c, err)
			return 2
		}
		kvRole = cfg.Role
		flags["data-parallel-hybrid-lb"] = strconv.FormatBool(stub.Has(args, "--data-parallel-hybrid-lb"))
		flags["nixl-side-channel-host"] = os.Getenv("VLLM_NIXL_SIDE_CHANNEL_HOST")
	}
	// A backend the hardware cannot run: vLLM refuses it while the engine
	// starts, with a ValueError (what a backend sweep records).
	for _, f := range []string{"--attention-backend", "--moe-backend"} {
		v, ok := stub.Flag(args, f)
		if !ok {
			continue
		}
		flags[strings.TrimPrefix(f, "--")] = v
		for _, bad := range strings.Split(os.Getenv("WLC_STUB_REFUSE_BACKENDS"), ",") {
			if bad != "" && strings.EqualFold(bad, v) {
				stub.Write("vllm", "serve", flags)
				fmt.Printf("INFO stub vllm serve %s (pid %d): engine starting\n", model, os.Getpid())
				fmt.Printf("ValueError: %s %s is not supported on this platform (WLC_STUB_REFUSE_BACKENDS)\n", f, v)
				return 1
			}
		}
	}
	if os.Getenv("WLC_STUB_FAULT") == "oom-loading" {
		// The weights do not fit: PyTorch's error while the model loads.
		stub.Write("vllm", "serve", flags)
		fmt.Printf("INFO stub vllm serve %s (pid %d): loading weights\n", model, os.Getpid())
		fmt.Println("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.06 GiB is free. (WLC_STUB_FAULT=oom-loading)")
		return 1
	}
	headless := stub.Has(args, "--headless")
	if headless {
		flags["headless"] = "true"
	}
	// The Python packages the server imports, at the versions it sees
	// (WLC_STUB_SERVER_IMPORTS=numpy,...), as flags import:<module>.
	for _, m := range strings.Split(os.Getenv("WLC_STUB_SERVER_IMPORTS"), ",") {
		if m == "" {
			continue
		}
		out, err := exec.Command("python3", "-c", "import "+m+"; print(getattr("+m+", '__version__', '?'))").Output()
		v := strings.TrimSpace(string(out))
		if err != nil {
			v = "missing"
		}
		flags["import:"+m] = v
	}
	stub.Write("vllm", "serve", flags)
	// vLLM's API server logs its version first (what provenance.json reads).
	fmt.Printf("INFO [api_server.py:1] vLLM API server version %s\n", version())
	fmt.Printf("INFO stub vllm serve %s (pid %d) on %s:%s headless=%v\n", model, os.Getpid(), host, port, headless)

	// Workers stay behind when the server exits, as orphaned engine
	// processes would: only a process-group kill removes them.
	if n, _ := strconv.Atoi(os.Getenv("WLC_STUB_WORKERS")); n > 0 {
		self, _ := os.Executable()
		for i := 0; i < n; i++ {
			w := exec.Command(self, "__worker")
			if err := w.Start(); err != nil {
				fmt.Printf("ERROR stub vllm: worker: %v\n", err)
				return 1
			}
		}
	}
	ignoreTerm := os.Getenv("WLC_STUB_IGNORE_TERM") == "1"
	done := make(chan int, 1)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		for s := range sigs {
			if ignoreTerm {
				fmt.Printf("INFO stub vllm: %v ignored (WLC_STUB_IGNORE_TERM)\n", s)
				continue
			}
			fmt.Printf("INFO stub vllm: %v, shutting down\n", s)
			stub.Write("vllm", "stopped", map[string]string{"requests": strconv.FormatInt(completions.Load(), 10),
				"first_request": stamp(&firstRequest), "last_request": stamp(&lastRequest)})
			done <- 0
		}
	}()
	if r := os.Getenv("WLC_STUB_DIE_KV_ROLE"); r != "" && r != kvRole {
		// Only the instances of that KV role die (a decode instance dying
		// while the prefill instance lives on).
	} else if d := stub.EnvSeconds("WLC_STUB_DIE_AFTER"); d > 0 {
		go func() {
			time.Sleep(d)
			fmt.Printf("ERROR stub vllm: dying after %v as WLC_STUB_DIE_AFTER asks\n", d)
			done <- stub.DieCode()
		}()
	}
	if f := os.Getenv("WLC_STUB_DIE_ON_FILE"); f != "" {
		// Dies once f exists: a test makes the server die at a moment of
		// its choosing (e.g. the fake pip's WLC_STUB_PIP_MARK).
		go func() {
			for {
				if _, err := os.Stat(f); err == nil {
					fmt.Printf("ERROR stub vllm: dying as %s exists (WLC_STUB_DIE_ON_FILE)\n", f)
					done <- stub.DieCode()
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
		}()
	}
	if !headless {
		// vLLM binds its port before the engine starts (SO_REUSEPORT: a
		// second server on the port binds it too) and listens once up.
		sock, err := stub.BindReusePort(host, port)
		if err != nil {
			fmt.Printf("ERROR stub vllm: OSError: %v\n", err)
			return 1
		}
		go func() {
			time.Sleep(stub.EnvSeconds("WLC_STUB_STARTUP_DELAY"))
			if f := os.Getenv("WLC_STUB_LISTEN_ON_FILE"); f != "" {
				for {
					if _, err := os.Stat(f); err == nil {
						break
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
			ln, err := sock.Listen()
			if err != nil {
				fmt.Printf("ERROR stub vllm: %v\n", err)
				done <- 1
				return
			}
			fmt.Println("INFO Application startup complete.")
			stub.Write("vllm", "ready", nil)
			srv := &http.Server{Handler: handler(served, done)}
			_ = srv.Serve(ln)
		}()
	}
	return <-done
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // like vLLM (Starlette's JSONResponse)
	_ = enc.Encode(v)
}

// What the server answered, for the "stopped" record: the number of
// completions and when the first and the last arrived (Unix ns).
var completions, firstRequest, lastRequest atomic.Int64

func stamp(ns *atomic.Int64) string {
	if v := ns.Load(); v != 0 {
		return time.Unix(0, v).UTC().Format(time.RFC3339Nano)
	}
	return ""
}

func handler(model string, done chan<- int) http.Handler {
	limit, _ := strconv.ParseInt(os.Getenv("WLC_STUB_DIE_AFTER_REQUESTS"), 10, 64)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"object": "list", "data": []map[string]any{
			{"id": model, "object": "model", "owned_by": "vllm", "root": model}}})
	})
	fault := os.Getenv("WLC_STUB_FAULT")
	var requests atomic.Int64
	complete := func(chat bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			var req struct {
				Model     string `json:"model"`
				MaxTokens int    `json:"max_tokens"`
				Tools     []any  `json:"tools"`
			}
			now := time.Now().UnixNano()
			firstRequest.CompareAndSwap(0, now)
			lastRequest.Store(now)
			body, _ := io.ReadAll(r.Body)
			if err := json.Unmarshal(body, &req); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			if req.Model != model {
				w.WriteHeader(http.StatusNotFound)
				writeJSON(w, map[string]any{"error": map[string]any{"message": fmt.Sprintf("The model `%s` does not exist.", req.Model)}})
				return
			}
			nth := requests.Add(1)
			switch {
			case fault == "fail-some" && nth%3 == 0:
				// An engine error mid-run, as vLLM answers it.
				w.WriteHeader(http.StatusInternalServerError)
				writeJSON(w, map[string]any{"object": "error", "type": "InternalServerError", "code": 500,
					"message": "EngineCore encountered an issue (WLC_STUB_FAULT=fail-some)"})
				return
			case fault == "error" && chat && len(req.Tools) > 0:
				// vLLM's answer to tools when it was started without
				// --enable-auto-tool-choice (tool_choice defaults to auto).
				w.WriteHeader(http.StatusBadRequest)
				writeJSON(w, map[string]any{"object": "error", "type": "BadRequestError", "code": 400,
					"message": "\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set"})
				return
			}
			// Every requested token is generated (as with ignore_eos); the
			// text shows at most 16 of them.
			n := req.MaxTokens
			if n <= 0 {
				n = 16
			}
			text := strings.TrimSpace(strings.Repeat("ok ", min(n, 16)))
			if fault == "empty" {
				// A broken model: each completion ends at once, empty.
				n, text = 0, ""
			}
			finish := "length"
			if n == 0 {
				finish = "stop"
			}
			choice := map[string]any{"index": 0, "text": text, "finish_reason": finish}
			object := "text_completion"
			if chat {
				choice = map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": text}, "finish_reason": finish}
				object = "chat.completion"
			}
			writeJSON(w, map[string]any{"id": "cmpl-stub", "object": object, "model": model,
				"choices": []any{choice}, "usage": map[string]int{"prompt_tokens": 8, "completion_tokens": n, "total_tokens": 8 + n}})
			if c := completions.Add(1); limit > 0 && c >= limit {
				go func() {
					time.Sleep(20 * time.Millisecond)
					fmt.Printf("ERROR stub vllm: dying after %d requests as WLC_STUB_DIE_AFTER_REQUESTS asks\n", c)
					done <- stub.DieCode()
				}()
			}
		}
	}
	mux.HandleFunc("POST /v1/completions", complete(false))
	mux.HandleFunc("POST /v1/chat/completions", complete(true))
	return mux
}

func intFlag(args []string, name string, def int) int {
	if v, ok := stub.Flag(args, name); ok {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return def
}

func bench(args []string) int {
	stub.Write("vllm", "bench", nil)
	// The benchmark's own time (WLC_STUB_BENCH_DELAY seconds), before its
	// requests: its last request is its end.
	time.Sleep(stub.EnvSeconds("WLC_STUB_BENCH_DELAY"))
	if v := os.Getenv("WLC_STUB_BENCH_FAIL"); v != "" && v != "0" {
		code, err := strconv.Atoi(v)
		if err != nil || code <= 0 {
			code = 1
		}
		fmt.Fprintf(os.Stderr, "stub vllm bench serve: failing with %d as WLC_STUB_BENCH_FAIL asks\n", code)
		return code
	}
	base, ok := stub.Flag(args, "--base-url")
	if !ok {
		host, _ := stub.Flag(args, "--host")
		if host == "" {
			host = "127.0.0.1"
		}
		base = "http://" + net.JoinHostPort(host, strconv.Itoa(intFlag(args, "--port", 8000)))
	}
	endpoint, ok := stub.Flag(args, "--endpoint")
	if !ok {
		endpoint = "/v1/completions"
	}
	model, _ := stub.Flag(args, "--model")
	backend, ok := stub.Flag(args, "--backend")
	if !ok {
		backend = "vllm"
	}
	// SPEED-Bench is read from <dataset-path>/<subset>.jsonl, which vLLM
	// does not download.
	if ds, _ := stub.Flag(args, "--dataset-name"); ds == "speed_bench" {
		dir, _ := stub.Flag(args, "--dataset-path")
		subset, _ := stub.Flag(args, "--speed-bench-dataset-subset")
		if fi, err := os.Stat(filepath.Join(dir, subset+".jsonl")); err != nil || fi.Size() == 0 {
			fmt.Fprintf(os.Stderr, "stub vllm bench serve: speed_bench needs %s/%s.jsonl (--dataset-path, --speed-bench-dataset-subset)\n", dir, subset)
			return 1
		}
	}
	prompts := intFlag(args, "--num-prompts", 1000)
	conc := intFlag(args, "--max-concurrency", prompts)
	if conc <= 0 {
		conc = prompts
	}
	inLen := intFlag(args, "--random-input-len", 1024)
	outLen := intFlag(args, "--random-output-len", 128)

	start := time.Now()
	var mu sync.Mutex
	var lat []float64
	failed, outTokens := 0, 0
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 10 * time.Second}
	for i := 0; i < prompts; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			var body []byte
			if strings.Contains(endpoint, "chat") {
				body, _ = json.Marshal(map[string]any{"model": model, "max_tokens": outLen,
					"messages": []map[string]string{{"role": "user", "content": fmt.Sprintf("prompt %d", i)}}})
			} else {
				body, _ = json.Marshal(map[string]any{"model": model, "prompt": fmt.Sprintf("prompt %d", i), "max_tokens": outLen})
			}
			t0 := time.Now()
			resp, err := client.Post(strings.TrimRight(base, "/")+endpoint, "application/json", bytes.NewReader(body))
			ok := err == nil && resp.StatusCode == 200
			// vLLM's client counts the tokens the server says it generated
			// (usage.completion_tokens): an empty completion is a
			// completed request with none.
			var out struct {
				Usage struct {
					CompletionTokens int `json:"completion_tokens"`
				} `json:"usage"`
			}
			if resp != nil {
				if ok {
					_ = json.NewDecoder(resp.Body).Decode(&out)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			mu.Lock()
			defer mu.Unlock()
			if ok {
				outTokens += out.Usage.CompletionTokens
				lat = append(lat, float64(time.Since(t0).Microseconds())/1000)
			} else {
				failed++
			}
		}(i)
	}
	wg.Wait()
	dur := time.Since(start).Seconds()
	sort.Float64s(lat)
	completed := len(lat)
	mean, med, p99 := stub.Stats(lat)
	res := map[string]any{
		"date": start.Format("20060102-150405"), "backend": backend, "model_id": model, "tokenizer_id": model,
		"num_prompts": prompts, "max_concurrency": conc, "request_rate": "inf", "burstiness": 1.0,
		"duration": dur, "completed": completed, "failed": failed,
		"total_input_tokens": completed * inLen, "total_output_tokens": outTokens,
		"request_throughput": float64(completed) / dur, "request_goodput": nil,
		"output_throughput": float64(outTokens) / dur, "total_token_throughput": float64(completed*inLen+outTokens) / dur,
		"mean_ttft_ms": mean, "median_ttft_ms": med, "std_ttft_ms": 0.0, "p99_ttft_ms": p99,
		"mean_tpot_ms": mean / float64(outLen), "median_tpot_ms": med / float64(outLen), "std_tpot_ms": 0.0, "p99_tpot_ms": p99 / float64(outLen),
		"mean_itl_ms": mean / float64(outLen), "median_itl_ms": med / float64(outLen), "std_itl_ms": 0.0, "p99_itl_ms": p99 / float64(outLen),
		"mean_e2el_ms": mean, "median_e2el_ms": med, "std_e2el_ms": 0.0, "p99_e2el_ms": p99,
		"ttfts": lat,
	}
	fmt.Printf("============ Serving Benchmark Result ============\nSuccessful requests: %d\nFailed requests: %d\nBenchmark duration (s): %.2f\n", completed, failed, dur)
	if stub.Has(args, "--save-result") {
		dir, _ := stub.Flag(args, "--result-dir")
		name, ok := stub.Flag(args, "--result-filename")
		if !ok {
			name = fmt.Sprintf("%s-%s-stub.json", backend, start.Format("20060102-150405"))
		}
		if dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
		// WLC_STUB_BENCH_RESULT=truncated writes half the file (a client
		// killed mid-write); none-completed a run where no request finished.
		switch os.Getenv("WLC_STUB_BENCH_RESULT") {
		case "none-completed":
			res["completed"], res["failed"], res["total_token_throughput"], res["output_throughput"] = 0, 0, 0.0, 0.0
		}
		data, _ := json.MarshalIndent(res, "", "  ")
		if os.Getenv("WLC_STUB_BENCH_RESULT") == "truncated" {
			data = data[:len(data)/2]
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}
