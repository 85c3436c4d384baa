package check_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/wlcdev/wlc/internal/check"
	"github.com/wlcdev/wlc/internal/engine/cmdline"
	"github.com/wlcdev/wlc/internal/engine/vllmflags"
	"github.com/wlcdev/wlc/internal/engine/vllmrouter"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/schema"
)

// The fuzz targets of the routes of free-form options: whatever vet lets
// through renders to an argv that the command's parser model reads back
// with every option wlc sets holding wlc's value (so whatever normalises
// to such an option was refused), and no input panics.

// routeEnv is vet's: the built-in vLLM flag catalogs.
var routeEnv = &check.Env{VLLMFlags: vllmflags.Builtin()}

// routeFindings are vet's findings under prefix.
func routeFindings(w *check.Workload, prefix string) []string {
	var out []string
	for _, d := range check.WorkloadRules(w, routeEnv) {
		if strings.HasPrefix(d.Path, prefix) {
			out = append(out, d.Path+": "+d.Message)
		}
	}
	return out
}

// FuzzRouterArgs: the PD router's extra_args (tokens split at NUL). What
// vet accepts, the router's parser (vllmrouter, the test double's) reads
// together with the runner's --port and worker URLs without an error, and
// the options wlc sets keep wlc's values: the port, the policy, the host,
// PD mode, exactly the job's workers.
func FuzzRouterArgs(f *testing.F) {
	for _, s := range []string{
		"", "--disable-retries", "--request-timeout-secs\x0010", "--port=9000", "--port\x009000",
		"--policy\x00random", "--prefill\x00http://x:1\x00none", "--decode=http://x:2", "--worker-urls\x00http://a",
		"--request_timeout_secs=1", "--prometheus-p\x009100", "--help", "-V", "--cors-allowed-origins\x00a\x00b",
		"--log-level\x00loud", "--enable-trace=1", "--max-payload-size\x001\x00--max-payload-size\x002",
		"--api-key\x00-x", "--otel-sampling-ratio\x00-1", "8000", "--host=::", "--vllm-pd-disaggregation",
		"--selector\x00--port\x001", "--intra-node-data-parallel-size\x002", "-", "--", "--=x", "--api-key",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		extra := strings.Split(in, "\x00")
		if in == "" {
			extra = nil
		}
		rt := schema.Router{Command: []string{"vllm-router"}, Policy: "cache_aware", IntraNodeDataParallelSize: 1, MetricsPort: 9100, ExtraArgs: extra}
		w := &check.Workload{Decoded: true, Workload: schema.Workload{Name: "w", Profile: "P", Model: "org/m", Precision: "bf16",
			Disagg: &schema.Disagg{Router: rt}}}
		if fs := routeFindings(w, "disagg.router"); len(fs) > 0 {
			return // refused: fine, whatever it is
		}
		// The runner's additions (backends/slurm/pd.go).
		argv := append(plan.RouterArgv(rt)[1:], "--port", "8000", "--prefill", "http://10.0.0.1:8100", "--decode", "http://10.0.0.2:8200")
		pre, rest, _, err := vllmrouter.SplitPrefill(argv)
		if err != nil {
			t.Fatalf("vet accepted %q, but the router refuses its argv %q: %v", extra, argv, err)
		}
		vals, perr := vllmrouter.Parse(rest)
		if perr != nil {
			t.Fatalf("vet accepted %q, but the router refuses its argv %q: %v", extra, argv, perr)
		}
		want := map[string][]string{"port": {"8000"}, "policy": {"cache_aware"}, "host": {"0.0.0.0"}, "vllm-pd-disaggregation": {"true"},
			"decode": {"http://10.0.0.2:8200"}, "prometheus-port": {"9100"}, "intra-node-data-parallel-size": {"1"}}
		for k, v := range want {
			if !slices.Equal(vals[k], v) {
				t.Fatalf("vet accepted %q, but the router reads --%s as %q, not wlc's %q", extra, k, vals[k], v)
			}
		}
		for _, k := range []string{"help", "worker-urls", "vllm-discovery-address", "service-discovery", "selector", "prefill-selector", "decode-selector"} {
			if _, set := vals[k]; set {
				t.Fatalf("vet accepted %q, which sets the router's %s", extra, k)
			}
		}
		if len(pre) != 1 || pre[0].URL != "http://10.0.0.1:8100" || pre[0].Port != "" {
			t.Fatalf("vet accepted %q, but the router's prefill workers are %+v", extra, pre)
		}
	})
}

// FuzzSweepArgs: a bench sweep's args (one or two keys, the value of
// kind kind). What vet accepts (the schema's exact-name rule emulated),
// every run's argv read back by the `vllm bench serve` parser model
// (cmdline.VLLMBench, argparse's reading) keeps every option wlc sets at
// wlc's value: the concurrency the run is labelled with, its prompts, its
// warmups, the server address and result files.
func FuzzSweepArgs(f *testing.F) {
	for _, s := range []struct {
		k1, v1, k2 string
		kind       byte
	}{
		{"temperature", "0", "", 1}, {"max-concurrency=64", "", "", 0}, {"max-conc", "64", "", 2}, {"num_warm", "1", "", 2},
		{"metadata", "--max-concurrency=64", "", 3}, {"metadata", "k=v", "--num-prompts", 3}, {"temperature", "0", "--temperature", 1},
		{"max-concurrency= 64", "", "", 0}, {"--num_prom", "9", "", 2}, {"result-d", "/tmp", "", 1}, {"top_k", "-1", "top-p", 1},
		{"percentile-metrics", "ttft,tpot", "", 1}, {"request-rate", "inf", "burstiness", 2}, {"", "", "", 0}, {"-", "--", "=", 1},
	} {
		f.Add(s.k1, s.v1, s.k2, s.kind)
	}
	owned := map[string]bool{"num-warmups": true}
	for _, fl := range cmdline.VLLMBench.Flags {
		owned[strings.TrimPrefix(fl.Name, "--")] = true
	}
	f.Fuzz(func(t *testing.T, k1, v1, k2 string, kind byte) {
		var v any
		switch kind % 5 {
		case 0:
			v = true
		case 1:
			v = v1
		case 2:
			v = len(v1)
		case 3:
			v = []any{v1, "x"}
		case 4:
			v = map[string]any{"a": v1}
		}
		args := map[string]any{k1: v}
		if k2 != "" && k2 != k1 {
			args[k2] = true
		}
		for k := range args {
			// The schema refuses the exact names (#BenchSweep).
			if owned[strings.ReplaceAll(strings.TrimLeft(k, "-"), "_", "-")] {
				return
			}
		}
		sweep := &schema.BenchSweep{Shapes: []schema.SweepShape{{InputLen: 8, OutputLen: 8}}, Concurrency: schema.Concurrency{List: []int{4, 16}},
			PromptsPerConcurrency: 2, MinPrompts: 1, Repetitions: 1, Args: args}
		w := &check.Workload{Decoded: true, Workload: schema.Workload{Name: "w", Profile: "P", Model: "org/m", Precision: "bf16",
			Image: "vllm/vllm-openai:v0.13.0", VLLMBench: &schema.VLLMBench{Sweep: sweep}}}
		if fs := routeFindings(w, "vllm_bench.sweep.args"); len(fs) > 0 {
			return
		}
		runs := plan.BenchRuns(w.Workload)
		bare := w.Workload
		bare.VLLMBench = &schema.VLLMBench{Sweep: &schema.BenchSweep{Shapes: sweep.Shapes, Concurrency: sweep.Concurrency,
			PromptsPerConcurrency: 2, MinPrompts: 1, Repetitions: 1}}
		base := plan.BenchRuns(bare)
		if len(runs) != len(base) {
			t.Fatalf("args %v change the runs: %d, without them %d", args, len(runs), len(base))
		}
		for i, r := range runs {
			got, want := lastValues(r.Args), lastValues(base[i].Args)
			for opt, wv := range want {
				if opt == "--num-warmups" || cmdline.VLLMBench.Lookup(opt) != nil {
					if got[opt] != wv {
						t.Fatalf("vet accepted args %v, but run %s reads %s as %q, not wlc's %q (argv %q)", args, r.Name, opt, got[opt], wv, r.Args)
					}
				}
			}
			for opt := range got {
				if _, wlcs := want[opt]; !wlcs && (cmdline.VLLMBench.Lookup(opt) != nil || opt == "--num-warmups") {
					t.Fatalf("vet accepted args %v, which set %s, an option wlc sets (argv %q)", args, opt, r.Args)
				}
			}
		}
	})
}

// lastValues are argv's options as the parser reads them, each with its
// last value ("" for a switch).
func lastValues(argv []string) map[string]string {
	out := map[string]string{}
	for _, u := range cmdline.VLLMBench.Parse(argv).Units {
		if u.IsOption {
			out[u.Canonical()] = fmt.Sprint(u.Arg)
		}
	}
	return out
}
