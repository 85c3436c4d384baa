// Command vllm-router is a stand-in for vllm-router (vllm-project/router)
// in tests. Its command line is the real one's, as internal/engine/vllmrouter
// models it (the declaration vet checks extra_args with): the same long
// options, value choices and number types, --prefill URL [PORT|none] split
// off before clap; anything else is refused with status 2. In vLLM PD mode
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

	"github.com/wlcdev/wlc/internal/engine/vllmrouter"
	"github.com/wlcdev/wlc/internal/testrig/stub"
)

func usageError(err error) {
	fmt.Fprintf(os.Stderr, "error: %v\n\nFor more information, try '--help'.\n", err)
	os.Exit(2)
}

func main() {
	pre, rest, _, err := vllmrouter.SplitPrefill(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "Error: %q\n", err.Error())
		os.Exit(1)
	}
	vals, perr := vllmrouter.Parse(rest)
	if perr != nil {
		usageError(perr)
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
		prefills = append(prefills, p.URL)
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
