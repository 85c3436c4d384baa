// Command vllm-router is a stand-in for vllm-router (vllm-project/router)
// in tests. Its command line is the real one's: the same long options,
// value choices and number types (clap's parser in src/main.rs, with
// --prefill URL [PORT|none] split off before clap as the real router
// does); anything else is refused with status 2. In vLLM PD mode
// (--vllm-pd-disaggregation) it serves what the jobs use: GET /health,
// GET /readiness (200 once every --prefill and --decode URL answers
// /health), GET /v1/models (from a decode worker), and POST
// /v1/completions and /v1/chat/completions in two stages: the request with
// max_tokens 1 to a prefill worker, then the request to a decode worker,
// round robin over each, the decode worker's answer returned. See package
// github.com/wlcdev/wlc/internal/testrig/stub for the records it writes.
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
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wlcdev/wlc/internal/testrig/stub"
)

// kind is how clap parses an option.
type kind int

const (
	boolFlag kind = iota // ArgAction::SetTrue: no value
	single               // one value
	appendV              // ArgAction::Append: one value per occurrence
	many                 // num_args = 0..: values up to the next option
)

type option struct {
	kind    kind
	choices []string // value_parser / ValueEnum
	num     string   // "u16", "u32", "u64", "usize", "f32", "f64"
}

var policies = []string{"random", "round_robin", "cache_aware", "power_of_two", "consistent_hash", "sticky_least_loaded", "rendezvous_hash"}

// options are vllm-router's CliArgs, by long name.
var options = map[string]option{
	"host":                          {kind: single},
	"port":                          {kind: single, num: "u16"},
	"worker-urls":                   {kind: many},
	"policy":                        {kind: single, choices: policies},
	"vllm-pd-disaggregation":        {kind: boolFlag},
	"vllm-discovery-address":        {kind: single},
	"decode":                        {kind: appendV},
	"prefill-policy":                {kind: single, choices: policies},
	"decode-policy":                 {kind: single, choices: policies},
	"worker-startup-timeout-secs":   {kind: single, num: "u64"},
	"worker-startup-check-interval": {kind: single, num: "u64"},
	"cache-threshold":               {kind: single, num: "f32"},
	"balance-abs-threshold":         {kind: single, num: "usize"},
	"balance-rel-threshold":         {kind: single, num: "f32"},
	"eviction-interval":             {kind: single, num: "u64"},
	"max-tree-size":                 {kind: single, num: "usize"},
	"max-payload-size":              {kind: single, num: "usize"},
	"intra-node-data-parallel-size": {kind: single, num: "usize"},
	"api-key":                       {kind: single},
	"api-key-validation-urls":       {kind: many},
	"backend":                       {kind: single, choices: []string{"vllm", "trtllm", "openai", "anthropic"}},
	"runtime":                       {kind: single, choices: []string{"vllm", "trtllm", "openai", "anthropic"}},
	"log-dir":                       {kind: single},
	"log-level":                     {kind: single, choices: []string{"debug", "info", "warn", "error"}},
	"enable-trace":                  {kind: boolFlag},
	"otlp-traces-endpoint":          {kind: single},
	"otel-sampling-ratio":           {kind: single, num: "f64"},
	"otel-excluded-paths":           {kind: many},
	"service-discovery":             {kind: boolFlag},
	"selector":                      {kind: many},
	"service-discovery-port":        {kind: single, num: "u16"},
	"service-discovery-namespace":   {kind: single},
	"prefill-selector":              {kind: many},
	"decode-selector":               {kind: many},
	"prometheus-port":               {kind: single, num: "u16"},
	"prometheus-host":               {kind: single},
	"request-id-headers":            {kind: many},
	"request-timeout-secs":          {kind: single, num: "u64"},
	"max-concurrent-requests":       {kind: single, num: "usize"},
	"cors-allowed-origins":          {kind: many},
	"retry-max-retries":             {kind: single, num: "u32"},
	"retry-initial-backoff-ms":      {kind: single, num: "u64"},
	"retry-max-backoff-ms":          {kind: single, num: "u64"},
	"retry-backoff-multiplier":      {kind: single, num: "f32"},
	"retry-jitter-factor":           {kind: single, num: "f32"},
	"disable-retries":               {kind: boolFlag},
	"cb-failure-threshold":          {kind: single, num: "u32"},
	"cb-success-threshold":          {kind: single, num: "u32"},
	"cb-timeout-duration-secs":      {kind: single, num: "u64"},
	"cb-window-duration-secs":       {kind: single, num: "u64"},
	"disable-circuit-breaker":       {kind: boolFlag},
	"health-failure-threshold":      {kind: single, num: "u32"},
	"health-success-threshold":      {kind: single, num: "u32"},
	"health-check-timeout-secs":     {kind: single, num: "u64"},
	"health-check-interval-secs":    {kind: single, num: "u64"},
	"health-check-endpoint":         {kind: single},
	"enable-igw":                    {kind: boolFlag},
	"history-backend":               {kind: single, choices: []string{"memory", "none"}},
	"profile":                       {kind: boolFlag},
	"kv-connector":                  {kind: single, choices: []string{"nixl", "mooncake"}},
}

type prefillURL struct {
	url  string
	port string // the bootstrap port, "" for none
}

// splitPrefill takes every --prefill URL [PORT|none] out of args before
// option parsing, as the real router does.
func splitPrefill(args []string) ([]prefillURL, []string, error) {
	var pre []prefillURL
	var rest []string
	for i := 0; i < len(args); i++ {
		if args[i] != "--prefill" {
			rest = append(rest, args[i])
			continue
		}
		if i+1 >= len(args) {
			return nil, nil, fmt.Errorf("--prefill requires a URL immediately after")
		}
		u := args[i+1]
		i++
		if strings.HasPrefix(u, "-") {
			return nil, nil, fmt.Errorf("Invalid url %s", u)
		}
		p := prefillURL{url: u}
		if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			next := args[i+1]
			if strings.EqualFold(next, "none") {
				i++
			} else if _, err := strconv.ParseUint(next, 10, 16); err == nil {
				p.port = next
				i++
			}
		}
		pre = append(pre, p)
	}
	return pre, rest, nil
}

// parse is clap's view of the remaining arguments: every value by long
// option name (booleans as "true").
func parse(args []string) (map[string][]string, error) {
	vals := map[string][]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-h" || a == "--help" || a == "-V" || a == "--version" {
			vals["help"] = []string{a}
			continue
		}
		if !strings.HasPrefix(a, "--") {
			return nil, fmt.Errorf("unexpected argument '%s' found", a)
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		opt, ok := options[name]
		if !ok {
			return nil, fmt.Errorf("unexpected argument '--%s' found", name)
		}
		switch opt.kind {
		case boolFlag:
			if hasValue {
				return nil, fmt.Errorf("unexpected value '%s' for '--%s' found; no more were expected", value, name)
			}
			vals[name] = []string{"true"}
			continue
		case many:
			var vs []string
			if hasValue {
				vs = append(vs, value)
			}
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				vs = append(vs, args[i+1])
				i++
			}
			vals[name] = append(vals[name], vs...)
			continue
		}
		if !hasValue {
			if i+1 >= len(args) || (strings.HasPrefix(args[i+1], "-") && !isNumber(args[i+1])) {
				return nil, fmt.Errorf("a value is required for '--%s <%s>' but none was supplied", name, strings.ToUpper(strings.ReplaceAll(name, "-", "_")))
			}
			value = args[i+1]
			i++
		}
		if err := check(name, opt, value); err != nil {
			return nil, err
		}
		if opt.kind == single {
			if _, dup := vals[name]; dup {
				return nil, fmt.Errorf("the argument '--%s <%s>' cannot be used multiple times", name, strings.ToUpper(strings.ReplaceAll(name, "-", "_")))
			}
		}
		vals[name] = append(vals[name], value)
	}
	return vals, nil
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

func check(name string, opt option, v string) error {
	if len(opt.choices) > 0 {
		for _, c := range opt.choices {
			if v == c {
				return nil
			}
		}
		return fmt.Errorf("invalid value '%s' for '--%s <%s>'\n  [possible values: %s]", v, name, strings.ToUpper(strings.ReplaceAll(name, "-", "_")), strings.Join(opt.choices, ", "))
	}
	var err error
	switch opt.num {
	case "u16":
		_, err = strconv.ParseUint(v, 10, 16)
	case "u32":
		_, err = strconv.ParseUint(v, 10, 32)
	case "u64", "usize":
		_, err = strconv.ParseUint(v, 10, 64)
	case "f32", "f64":
		_, err = strconv.ParseFloat(v, 64)
	}
	if err != nil {
		return fmt.Errorf("invalid value '%s' for '--%s <%s>': %v", v, name, strings.ToUpper(strings.ReplaceAll(name, "-", "_")), err)
	}
	return nil
}

func usageError(err error) {
	fmt.Fprintf(os.Stderr, "error: %v\n\nFor more information, try '--help'.\n", err)
	os.Exit(2)
}

func main() {
	pre, rest, err := splitPrefill(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "Error: %q\n", err.Error())
		os.Exit(1)
	}
	vals, err := parse(rest)
	if err != nil {
		usageError(err)
	}
	if _, ok := vals["help"]; ok {
		fmt.Println("vllm-router (wlc stub)")
		return
	}
	get := func(name, def string) string {
		if v, ok := vals[name]; ok && len(v) > 0 {
			return v[len(v)-1]
		}
		return def
	}
	if get("vllm-pd-disaggregation", "") != "true" {
		fmt.Fprintln(os.Stderr, "stub vllm-router: only --vllm-pd-disaggregation mode is implemented")
		os.Exit(1)
	}
	decode := vals["decode"]
	if len(pre) == 0 && len(decode) == 0 && get("vllm-discovery-address", "") == "" {
		fmt.Fprintln(os.Stderr, "Error: ValidationFailed { reason: \"vLLM PD disaggregation mode requires one of: --vllm-discovery-address, --prefill/--decode URLs, or --service-discovery with --prefill-selector/--decode-selector\" }")
		os.Exit(1)
	}
	if len(pre) == 0 || len(decode) == 0 {
		fmt.Fprintln(os.Stderr, "stub vllm-router: static PD mode needs --prefill and --decode URLs")
		os.Exit(1)
	}
	var prefills []string
	for _, p := range pre {
		prefills = append(prefills, p.url)
	}
	host, port := get("host", "127.0.0.1"), get("port", "30000")
	stub.Write("vllm-router", "route", map[string]string{
		"host": host, "port": port, "policy": get("policy", "cache_aware"),
		"intra_node_data_parallel_size": get("intra-node-data-parallel-size", "1"),
		"prefill":                       strings.Join(prefills, ","),
		"decode":                        strings.Join(decode, ","),
	})
	r := &router{prefill: prefills, decode: decode, counts: map[string]*atomic.Int64{}}
	for _, u := range append(append([]string(nil), prefills...), decode...) {
		r.counts[u] = &atomic.Int64{}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		fmt.Fprintf(os.Stderr, "stub vllm-router: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("VLLM Router starting...\nHost: %s:%s\nMode: vLLM PD Disaggregated\nPolicy: %s\nPrefill nodes: %v\nDecode nodes: %v\n", host, port, get("policy", "cache_aware"), prefills, decode)
	srv := &http.Server{Handler: r.handler()}
	go func() { _ = srv.Serve(ln) }()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	s := <-sigs
	fmt.Printf("stub vllm-router: %v, shutting down\n", s)
	served := map[string]string{}
	for u, c := range r.counts {
		served[u] = strconv.FormatInt(c.Load(), 10)
	}
	stub.Write("vllm-router", "served", served)
}

type router struct {
	prefill, decode []string
	next            atomic.Int64
	counts          map[string]*atomic.Int64
}

var client = &http.Client{Timeout: 30 * time.Second}

func healthy(u string) bool {
	resp, err := client.Get(strings.TrimRight(u, "/") + "/health")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == 200
}

func (r *router) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {})
	mux.HandleFunc("GET /readiness", func(w http.ResponseWriter, _ *http.Request) {
		for _, u := range append(append([]string(nil), r.prefill...), r.decode...) {
			if !healthy(u) {
				http.Error(w, "worker not ready: "+u, http.StatusServiceUnavailable)
				return
			}
		}
	})
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, _ *http.Request) {
		resp, err := client.Get(strings.TrimRight(r.decode[0], "/") + "/v1/models")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	})
	for _, path := range []string{"/v1/completions", "/v1/chat/completions"} {
		mux.HandleFunc("POST "+path, func(w http.ResponseWriter, req *http.Request) { r.twoStage(w, req, path) })
	}
	return mux
}

// twoStage sends the request to a prefill worker with max_tokens 1, then
// to a decode worker, and returns the decode worker's answer.
func (r *router) twoStage(w http.ResponseWriter, req *http.Request, path string) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	n := int(r.next.Add(1) - 1)
	p := r.prefill[n%len(r.prefill)]
	d := r.decode[n%len(r.decode)]
	m["max_tokens"] = 1
	pre, _ := json.Marshal(m)
	resp, err := client.Post(strings.TrimRight(p, "/")+path, "application/json", bytes.NewReader(pre))
	if err != nil {
		http.Error(w, "prefill: "+err.Error(), http.StatusBadGateway)
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	r.counts[p].Add(1)
	if resp.StatusCode != 200 {
		http.Error(w, fmt.Sprintf("prefill %s answered %d", p, resp.StatusCode), http.StatusBadGateway)
		return
	}
	resp, err = client.Post(strings.TrimRight(d, "/")+path, "application/json", bytes.NewReader(body))
	if err != nil {
		http.Error(w, "decode: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	r.counts[d].Add(1)
	w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}
