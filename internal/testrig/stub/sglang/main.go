// Command sglang is a stand-in for SGLang's two entry points in tests, run
// as `sglang launch_server ARGS` and `sglang bench_serving ARGS` (the stub
// python3 maps `python3 -m sglang.<module>` to them). Both parse their
// arguments with the option tables of internal/engine/sglang, which model the real
// argparse definitions: an unknown, ambiguous, ill-typed or deprecated
// option fails with argparse's exit status 2, as the real one would, so a
// flag wlc renders wrongly fails the test. See package
// github.com/wlcdev/wlc/internal/testrig/stub for what each records and serves.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wlcdev/wlc/internal/engine/sglang"
	"github.com/wlcdev/wlc/internal/testrig/stub"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "stub sglang: want launch_server or bench_serving")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "launch_server":
		os.Exit(launch(os.Args[2:]))
	case "bench_serving":
		os.Exit(bench(os.Args[2:]))
	}
	fmt.Fprintf(os.Stderr, "stub sglang: unsupported module %q\n", os.Args[1])
	os.Exit(2)
}

// parsed is one parser's result: the last value given for each option
// (argparse keeps the last), by primary spelling.
type parsed map[string][]string

func (p parsed) get(name, def string) string {
	if v, ok := p[name]; ok && len(v) > 0 {
		return v[0]
	}
	return def
}

func (p parsed) has(name string) bool { _, ok := p[name]; return ok }

// parse exits like argparse (usage and error on stderr, status 2) when t
// refuses argv.
func parse(t *sglang.Table, script string, argv []string) parsed {
	args, errs := t.Parse(argv)
	if len(errs) > 0 {
		fmt.Fprintf(os.Stderr, "usage: %s [-h] [options]\n%s: error: %s\n", script, script, errs[0].Msg)
		os.Exit(2)
	}
	p := parsed{}
	for _, a := range args {
		p[a.Option.Name()] = a.Values
	}
	if p.has("--help") {
		help(t, script)
		os.Exit(0)
	}
	return p
}

// help prints the parser's options in argparse's format (what wlc's
// preflight reads): each option's spellings, with a metavar when it takes
// a value.
func help(t *sglang.Table, script string) {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: %s [-h] [options]\n\noptions:\n  -h, --help            show this help message and exit\n", script)
	for _, o := range t.Options() {
		if o.Name() == "--help" {
			continue
		}
		mv := strings.ToUpper(strings.ReplaceAll(strings.TrimLeft(o.Name(), "-"), "-", "_"))
		if len(o.Choices) > 0 {
			mv = "{" + strings.Join(o.Choices, ",") + "}"
		}
		var parts []string
		for _, n := range o.Names {
			switch o.Kind {
			case sglang.Flag, sglang.Deprecated:
				parts = append(parts, n)
			case sglang.List:
				parts = append(parts, n+" "+mv+" ["+mv+" ...]")
			case sglang.AnyList:
				parts = append(parts, n+" ["+mv+" ...]")
			case sglang.Optional:
				parts = append(parts, n+" ["+mv+"]")
			default:
				parts = append(parts, n+" "+mv)
			}
		}
		fmt.Fprintf(&b, "  %s\n                        (default: None)\n", strings.Join(parts, ", "))
	}
	os.Stdout.WriteString(b.String())
}

func launch(argv []string) int {
	p := parse(sglang.LaunchServer, "launch_server.py", argv)
	model := p.get("--model-path", "")
	if model == "" {
		fmt.Fprintln(os.Stderr, "launch_server.py: error: --model-path is required")
		return 2
	}
	served := p.get("--served-model-name", model)
	host, port := p.get("--host", "127.0.0.1"), p.get("--port", "30000")
	rank, _ := strconv.Atoi(p.get("--node-rank", "0"))
	flags := map[string]string{"model": model, "host": host, "port": port}
	for _, f := range []string{"--tp-size", "--dp-size", "--pp-size", "--ep-size", "--nnodes", "--node-rank", "--dist-init-addr", "--kv-cache-dtype", "--mem-fraction-static"} {
		if p.has(f) {
			flags[strings.TrimPrefix(f, "--")] = p.get(f, "")
		}
	}
	if p.has("--enable-dp-attention") {
		flags["enable-dp-attention"] = "true"
	}
	stub.Write("sglang", "launch_server", flags)
	fmt.Printf("[stub sglang] launch_server %s (pid %d) on %s:%s node-rank %d\n", model, os.Getpid(), host, port, rank)

	done := make(chan int, 1)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		s := <-sigs
		fmt.Printf("[stub sglang] %v, shutting down\n", s)
		done <- 0
	}()
	if d := stub.EnvSeconds("WLC_STUB_DIE_AFTER"); d > 0 {
		go func() {
			time.Sleep(d)
			fmt.Printf("[stub sglang] dying after %v as WLC_STUB_DIE_AFTER asks\n", d)
			done <- stub.DieCode()
		}()
	}
	// Ranks above 0 join the head's rendezvous and serve no HTTP.
	if rank == 0 {
		go func() {
			time.Sleep(stub.EnvSeconds("WLC_STUB_STARTUP_DELAY"))
			ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
			if err != nil {
				fmt.Printf("[stub sglang] %v\n", err)
				done <- 1
				return
			}
			fmt.Println("[stub sglang] The server is fired up and ready to roll!")
			_ = (&http.Server{Handler: handler(served)}).Serve(ln)
		}()
	}
	return <-done
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// handler serves what SGLang's HTTP server serves for wlc's jobs: health,
// the model list, the native /generate, the OpenAI completions, and
// /flush_cache (bench_serving --flush-cache).
func handler(model string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("POST /flush_cache", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "Cache flushed.")
	})
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"object": "list", "data": []map[string]any{
			{"id": model, "object": "model", "owned_by": "sglang", "root": model}}})
	})
	tokens := func(n int) (int, string) {
		if n <= 0 || n > 16 {
			n = 16
		}
		return n, strings.TrimSpace(strings.Repeat("ok ", n))
	}
	mux.HandleFunc("POST /generate", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Text           any            `json:"text"`
			SamplingParams map[string]any `json:"sampling_params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		max, _ := req.SamplingParams["max_new_tokens"].(float64)
		n, text := tokens(int(max))
		writeJSON(w, map[string]any{"text": text, "meta_info": map[string]any{
			"prompt_tokens": 8, "completion_tokens": n, "finish_reason": map[string]any{"type": "length", "length": n}}})
	})
	complete := func(chat bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			var req struct {
				Model     string `json:"model"`
				MaxTokens int    `json:"max_tokens"`
			}
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			if req.Model != model {
				w.WriteHeader(http.StatusNotFound)
				writeJSON(w, map[string]any{"error": map[string]any{"message": fmt.Sprintf("The model `%s` does not exist.", req.Model)}})
				return
			}
			n, text := tokens(req.MaxTokens)
			choice := map[string]any{"index": 0, "text": text, "finish_reason": "length"}
			object := "text_completion"
			if chat {
				choice = map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": text}, "finish_reason": "length"}
				object = "chat.completion"
			}
			writeJSON(w, map[string]any{"id": "cmpl-stub", "object": object, "model": model,
				"choices": []any{choice}, "usage": map[string]int{"prompt_tokens": 8, "completion_tokens": n, "total_tokens": 8 + n}})
		}
	}
	mux.HandleFunc("POST /v1/completions", complete(false))
	mux.HandleFunc("POST /v1/chat/completions", complete(true))
	return mux
}

// ports are bench_serving's default ports per backend.
var ports = map[string]string{"sglang": "30000", "sglang-native": "30000", "sglang-oai": "30000",
	"lmdeploy": "23333", "vllm": "8000", "trt": "8000", "gserver": "9988", "truss": "8080"}

func bench(argv []string) int {
	p := parse(sglang.BenchServing, "bench_serving.py", argv)
	stub.Write("sglang", "bench_serving", nil)
	if v := os.Getenv("WLC_STUB_BENCH_FAIL"); v != "" && v != "0" {
		code, err := strconv.Atoi(v)
		if err != nil || code <= 0 {
			code = 1
		}
		fmt.Fprintf(os.Stderr, "stub bench_serving: failing with %d as WLC_STUB_BENCH_FAIL asks\n", code)
		return code
	}
	backend := p.get("--backend", "sglang")
	base := p.get("--base-url", "")
	if base == "" {
		port := p.get("--port", "")
		if port == "" {
			port = ports[backend]
			if port == "" {
				port = "30000"
			}
		}
		base = "http://" + net.JoinHostPort(p.get("--host", "0.0.0.0"), port)
	}
	base = strings.TrimRight(base, "/")
	var path string
	switch backend {
	case "sglang", "sglang-native":
		path = "/generate"
	case "sglang-oai", "vllm", "lmdeploy":
		path = "/v1/completions"
	case "sglang-oai-chat", "vllm-chat", "lmdeploy-chat":
		path = "/v1/chat/completions"
	default:
		fmt.Fprintf(os.Stderr, "stub bench_serving: backend %s is not modelled\n", backend)
		return 1
	}
	model := p.get("--model", "")
	if model == "" {
		fmt.Println("No model specified or found. Please provide a model using `--model`.")
		return 1
	}
	dataset := p.get("--dataset-name", "sharegpt")
	if dataset != "random" {
		fmt.Fprintf(os.Stderr, "stub bench_serving: dataset %s is not modelled (random only)\n", dataset)
		return 1
	}
	atoi := func(name, def string) int { n, _ := strconv.Atoi(p.get(name, def)); return n }
	prompts := atoi("--num-prompts", "1000")
	conc := atoi("--max-concurrency", "0")
	if conc <= 0 {
		conc = prompts
	}
	inLen, outLen := atoi("--random-input-len", "1024"), atoi("--random-output-len", "1024")
	client := &http.Client{Timeout: 10 * time.Second}
	send := func(i int) bool {
		var body []byte
		switch path {
		case "/generate":
			body, _ = json.Marshal(map[string]any{"text": fmt.Sprintf("prompt %d", i),
				"sampling_params": map[string]any{"max_new_tokens": outLen, "ignore_eos": true}, "stream": false})
		case "/v1/chat/completions":
			body, _ = json.Marshal(map[string]any{"model": model, "max_tokens": outLen,
				"messages": []map[string]string{{"role": "user", "content": fmt.Sprintf("prompt %d", i)}}})
		default:
			body, _ = json.Marshal(map[string]any{"model": model, "prompt": fmt.Sprintf("prompt %d", i), "max_tokens": outLen})
		}
		resp, err := client.Post(base+path, "application/json", bytes.NewReader(body))
		if err != nil {
			return false
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode == 200
	}
	if p.has("--flush-cache") {
		resp, err := client.Post(base+"/flush_cache", "application/json", nil)
		if err != nil || resp.StatusCode != 200 {
			fmt.Fprintf(os.Stderr, "stub bench_serving: /flush_cache failed: %v\n", err)
			return 1
		}
		resp.Body.Close()
	}
	for i := 0; i < atoi("--warmup-requests", "1"); i++ {
		if !send(-1 - i) {
			fmt.Fprintln(os.Stderr, "Initial test run failed - Please make sure benchmark arguments are correctly specified.")
			return 1
		}
	}

	start := time.Now()
	var mu sync.Mutex
	var lat []float64
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	for i := 0; i < prompts; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			t0 := time.Now()
			if send(i) {
				mu.Lock()
				lat = append(lat, float64(time.Since(t0).Microseconds())/1000)
				mu.Unlock()
			}
		}(i)
	}
	wg.Wait()
	dur := time.Since(start).Seconds()
	sort.Float64s(lat)
	completed := len(lat)
	mean, med, p99 := stub.Stats(lat)
	// The row bench_serving appends to --output-file, with its field names.
	row := map[string]any{
		"backend": backend, "dataset_name": dataset, "request_rate": "inf", "max_concurrency": conc,
		"sharegpt_output_len": nil, "random_input_len": inLen, "random_output_len": outLen,
		"random_range_ratio": p.get("--random-range-ratio", "0.0"),
		"duration":           dur, "completed": completed,
		"total_input_tokens": completed * inLen, "total_output_tokens": completed * outLen,
		"total_output_tokens_retokenized": completed * outLen,
		"request_throughput":              float64(completed) / dur,
		"input_throughput":                float64(completed*inLen) / dur, "output_throughput": float64(completed*outLen) / dur,
		"output_throughput_retokenized": float64(completed*outLen) / dur,
		"total_throughput":              float64(completed*(inLen+outLen)) / dur,
		"total_throughput_retokenized":  float64(completed*(inLen+outLen)) / dur,
		"mean_e2e_latency_ms":           mean, "median_e2e_latency_ms": med, "std_e2e_latency_ms": 0.0, "p99_e2e_latency_ms": p99,
		"mean_ttft_ms": mean, "median_ttft_ms": med, "std_ttft_ms": 0.0, "p99_ttft_ms": p99,
		"mean_tpot_ms": mean / float64(outLen), "median_tpot_ms": med / float64(outLen), "std_tpot_ms": 0.0, "p99_tpot_ms": p99 / float64(outLen),
		"mean_itl_ms": mean / float64(outLen), "median_itl_ms": med / float64(outLen), "std_itl_ms": 0.0,
		"p95_itl_ms": p99 / float64(outLen), "p99_itl_ms": p99 / float64(outLen),
		"concurrency": float64(conc), "accept_length": nil,
	}
	fmt.Printf("\n============ Serving Benchmark Result ============\nBackend: %s\nSuccessful requests: %d\nBenchmark duration (s): %.2f\n", backend, completed, dur)
	out := p.get("--output-file", fmt.Sprintf("%s_%s_%d_%d_%d.jsonl", backend, start.Format("0102"), prompts, inLen, outLen))
	line, _ := json.Marshal(row)
	f, err := os.OpenFile(out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer f.Close()
	if _, err := f.Write(append(line, '\n')); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
