package check_test

import (
	"strings"
	"testing"

	"github.com/wlcdev/wlc/internal/check"
	"github.com/wlcdev/wlc/schema"
)

// TestOwnedOptionRoutes: every route of free-form options (serve
// extra_args, a disaggregated role's extra_args, a bench config's args, a
// bench sweep's args, the PD router's extra_args) reads its tokens the
// way its command's parser does, so an option wlc sets is refused at the
// user's entry however it is spelled (--opt=v, --opt v, an unambiguous
// prefix, _ for -, a value that is itself an option), naming the typed
// field to set instead; the router's unknown options get a did-you-mean
// and its repeated ones the router's own refusal.
func TestOwnedOptionRoutes(t *testing.T) {
	type tc struct {
		name string
		set  func(w *schema.Workload)
		path string
		want string // in the message at path; "" for no finding there
	}
	sweep := func(args map[string]any) func(w *schema.Workload) {
		return func(w *schema.Workload) {
			w.VLLMBench = &schema.VLLMBench{Sweep: &schema.BenchSweep{
				Shapes: []schema.SweepShape{{InputLen: 8, OutputLen: 8}}, Concurrency: schema.Concurrency{List: []int{4}},
				PromptsPerConcurrency: 2, MinPrompts: 1, Repetitions: 1, Args: args}}
		}
	}
	config := func(args map[string]any) func(w *schema.Workload) {
		return func(w *schema.Workload) {
			w.VLLMBench = &schema.VLLMBench{Configs: []schema.BenchConfig{{Name: "c", InputLen: 8, OutputLen: 8,
				MaxConcurrency: schema.IntOrList{Values: []int{4}, Scalar: true}, NumPrompts: schema.IntOrList{Values: []int{8}, Scalar: true},
				Repetitions: 1, Dataset: "random", Args: args}}}
		}
	}
	sgbench := func(args map[string]any) func(w *schema.Workload) {
		return func(w *schema.Workload) {
			w.Engine = schema.EngineSGLang
			w.SGLangBench = &schema.SGLangBench{Configs: []schema.SGLangBenchConfig{{Name: "c", InputLen: 8, OutputLen: 8,
				MaxConcurrency: schema.IntOrList{Values: []int{4}, Scalar: true}, NumPrompts: schema.IntOrList{Values: []int{8}, Scalar: true},
				Repetitions: 1, Backend: "sglang", Dataset: "random", Args: args}}}
		}
	}
	router := func(args ...string) func(w *schema.Workload) {
		return func(w *schema.Workload) {
			w.Disagg = &schema.Disagg{Router: schema.Router{Command: []string{"vllm-router"}, Policy: "round_robin", IntraNodeDataParallelSize: 1, ExtraArgs: args}}
		}
	}
	serve := func(args ...string) func(w *schema.Workload) {
		return func(w *schema.Workload) { w.Serve.ExtraArgs = args }
	}
	role := func(args ...string) func(w *schema.Workload) {
		return func(w *schema.Workload) {
			w.Disagg = &schema.Disagg{Router: schema.Router{Command: []string{"vllm-router"}, Policy: "round_robin", IntraNodeDataParallelSize: 1}}
			w.Disagg.Decode.Serve.ExtraArgs = args
		}
	}
	const sw, cf = "vllm_bench.sweep.args.", "vllm_bench.configs[0].args."
	cases := []tc{
		// Sweeps: the three and more.
		{"sweep key=value", sweep(map[string]any{"max-concurrency=64": true}), sw + `"max-concurrency=64"`, "set by wlc from the config's max_concurrency"},
		{"sweep prefix", sweep(map[string]any{"max-conc": 64}), sw + `"max-conc"`, "(--max-concurrency to vLLM) is set by wlc from the config's max_concurrency; set the config's max_concurrency instead"},
		{"sweep num_warm prefix", sweep(map[string]any{"num_warm": 1}), sw + "num_warm", "(--num-warmups to vLLM) is set by the sweep"},
		{"sweep num-warmups=", sweep(map[string]any{"num-warmups=2": true}), sw + `"num-warmups=2"`, "set by the sweep"},
		{"sweep num_prom", sweep(map[string]any{"--num_prom": 9}), sw + `"--num_prom"`, "(--num-prompts to vLLM) is set by wlc from the config's num_prompts"},
		{"sweep result-dir prefix", sweep(map[string]any{"result-d": "/tmp"}), sw + `"result-d"`, "set by wlc itself"},
		{"sweep space value", sweep(map[string]any{"max-concurrency= 64": true}), sw + `"max-concurrency= 64"`, "--max-concurrency to vLLM"},
		{"sweep value is option", sweep(map[string]any{"metadata": []any{"k=v", "--max-concurrency=64"}}), sw + "metadata", "value --max-concurrency=64 (--max-concurrency to vLLM)"},
		{"sweep repeated", sweep(map[string]any{"temperature": 0, "--temperature": 1}), sw + "temperature", "are both --temperature"},
		{"sweep empty key", sweep(map[string]any{"": true, ".0": true}), sw + `""`, "names no option"},
		{"sweep key with a space", sweep(map[string]any{"max concurrency": 64}), sw + `"max concurrency"`, "names no option"},
		{"sweep dotted key without value", sweep(map[string]any{"extra-body.x": true}), sw + `"extra-body.x"`, "has no value"},
		{"sweep free option", sweep(map[string]any{"temperature": 0}), sw + "temperature", ""},
		// Configs.
		{"config key=value", config(map[string]any{"max_concurrency=64": true}), cf + `"max_concurrency=64"`, "set by wlc from the config's max_concurrency"},
		{"config prefix", config(map[string]any{"num-prom": 8}), cf + `"num-prom"`, "set by wlc from the config's num_prompts"},
		{"config value is option", config(map[string]any{"metadata": "--port=1"}), cf + "metadata", "value --port=1 (--port to vLLM)"},
		{"config repeated", config(map[string]any{"top_k": 1, "top-k": 2}), cf + "top_k", "are both --top-k"},
		// SGLang's bench client (its parser model): a list option's
		// value that is itself an option.
		{"sglang bench value is option", sgbench(map[string]any{"lora-name": "--max-concurrency=64"}), `sglang_bench.configs[0].args."lora-name"`, "value --max-concurrency=64 (--max-concurrency to python3 -m sglang.bench_serving) is set by wlc from the config's max_concurrency"},
		{"sglang bench prefix", sgbench(map[string]any{"num-prom": 9}), `sglang_bench.configs[0].args."num-prom"`, "set by the config's num_prompts"},
		// Serve extra_args, and a disaggregated role's.
		{"serve --opt=v", serve("--port=8000"), "serve.extra_args[0]", "--port=8000 is set by the runner"},
		{"serve prefix", serve("--tensor-parallel", "8"), "serve.extra_args[0]", "(--tensor-parallel-size to vLLM) is set by serve.tensor_parallel_size"},
		{"serve _ spelling", serve("--max_num_seqs=8"), "serve.extra_args[0]", "is set by serve.max_num_seqs"},
		{"serve space value", serve("--max-num-seqs= 8"), "serve.extra_args[0]", "is set by serve.max_num_seqs"},
		{"role prefix", role("--data-parallel-addr", "h"), "disagg.decode.serve.extra_args[0]", "on every disaggregated instance"},
		{"role _ spelling", role("--max_model_len=4k"), "disagg.decode.serve.extra_args[0]", "is set by disagg.decode.serve.max_model_len"},
		// The PD router.
		{"router --port v", router("--port", "9000"), "disagg.router.extra_args[0]", "--port is set by port; set port instead and remove it from disagg.router.extra_args"},
		{"router --port=v", router("--port=9000"), "disagg.router.extra_args[0]", "set port instead"},
		{"router policy", router("--policy=random"), "disagg.router.extra_args[0]", "set disagg.router.policy instead"},
		{"router metrics", router("--prometheus-port", "9100"), "disagg.router.extra_args[0]", "set disagg.router.metrics_port instead"},
		{"router host", router("--host", "127.0.0.1"), "disagg.router.extra_args[0]", "is set by wlc (0.0.0.0"},
		{"router decode URL", router("--decode", "http://x:1"), "disagg.router.extra_args[0]", "one --decode URL per decode node"},
		{"router prefill URL", router("--prefill", "http://x:1", "none"), "disagg.router.extra_args[0]", "one --prefill URL per prefill instance"},
		{"router worker urls", router("--worker-urls", "http://a", "http://b"), "disagg.router.extra_args[0]", "the router's workers are the job's instances"},
		{"router unknown", router("--request-timeout", "10"), "disagg.router.extra_args[0]", "vllm-router has no option --request-timeout; did you mean --request-timeout-secs?"},
		{"router _ spelling", router("--request_timeout_secs=10"), "disagg.router.extra_args[0]", "no option --request_timeout_secs; did you mean --request-timeout-secs?"},
		{"router prefix of owned", router("--prometheus-p", "9100"), "disagg.router.extra_args[0]", "did you mean --prometheus-port? (wlc sets it from disagg.router.metrics_port: set that instead)"},
		{"router repeated", router("--request-timeout-secs", "10", "--request-timeout-secs=20"), "disagg.router.extra_args[2]", "cannot be used multiple times"},
		{"router bad value", router("--log-level", "loud"), "disagg.router.extra_args[0]", "invalid value 'loud'"},
		{"router help", router("--help"), "disagg.router.extra_args[0]", "print and exit"},
		{"router switch with value", router("--enable-trace=yes"), "disagg.router.extra_args[0]", "unexpected value 'yes'"},
		{"router command repeats port", func(w *schema.Workload) {
			router()(w)
			w.Disagg.Router.Command = []string{"./target/release/vllm-router", "--port=9000"}
		}, "disagg.router.command[1]", "set port instead and remove it from disagg.router.command"},
		{"router free option", router("--request-timeout-secs", "10", "--disable-retries"), "disagg.router.extra_args[0]", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := &check.Workload{Decoded: true, Workload: schema.Workload{Name: "w", Profile: "P", Model: "org/m", Precision: "bf16"}}
			c.set(&w.Workload)
			got := ""
			var all []string
			for _, d := range check.WorkloadRules(w, &check.Env{}) {
				all = append(all, d.Path+": "+d.Message)
				if d.Path == c.path {
					got = d.Message
				}
			}
			switch {
			case c.want == "" && got != "":
				t.Errorf("%s: refused: %s", c.path, got)
			case c.want != "" && !strings.Contains(got, c.want):
				t.Errorf("%s: got %q, want it to say %q\nall findings:\n%s", c.path, got, c.want, strings.Join(all, "\n"))
			}
		})
	}
}
