// Command lm_eval is a stand-in for lm-evaluation-harness's CLI in tests
// (run as `python3 -m lm_eval` through the Python shim, see
// internal/testrig/stub/python). Its command line is lm-eval's own, as
// lm_eval/_cli (harness.py, run.py) defines it with argparse: the
// subcommands run, ls and validate, the legacy form without a subcommand
// (run is inserted when more than one argument is given), every option of
// `run` with its short alias and its number of values, --opt=value, and
// unambiguous prefixes of long options (argparse's allow_abbrev). Anything
// else fails the way argparse does: usage on stderr, exit 2.
//
// `run` with --model local-completions sends one completion per task to
// model_args' base_url and writes what lm-eval writes under --output_path:
// <model, sanitized>/results_<time>.json and, with --log_samples,
// samples_<task>_<time>.jsonl. It records its argv (internal/testrig/stub).
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/wlcdev/wlc/internal/testrig/stub"
)

// nargs is how many values an option takes, as argparse's nargs/action.
type nargs int

const (
	flag      nargs = iota // store_true
	one                    // one value
	optional               // nargs="?"
	oneOrMore              // nargs="+"
)

// runOptions are `lm-eval run`'s options (lm_eval/_cli/run.py), long name
// to short alias and nargs.
var runOptions = map[string]struct {
	short string
	n     nargs
}{
	"--config": {"-C", one}, "--tasks": {"-t", oneOrMore}, "--model": {"-M", one},
	"--model_args": {"-a", oneOrMore}, "--apply_chat_template": {"", optional},
	"--limit": {"-L", one}, "--use_cache": {"-c", one}, "--num_fewshot": {"-f", one},
	"--batch_size": {"-b", one}, "--max_batch_size": {"", one}, "--device": {"", one},
	"--gen_kwargs": {"", oneOrMore}, "--output_path": {"-o", one}, "--log_samples": {"-s", flag},
	"--samples": {"-E", one}, "--cache_requests": {"", optional}, "--check_integrity": {"", flag},
	"--system_instruction": {"", one}, "--fewshot_as_multiturn": {"", optional},
	"--include_path": {"", one}, "--verbosity": {"-v", one}, "--write_out": {"-w", flag},
	"--show_config": {"", flag}, "--wandb_args": {"", oneOrMore}, "--wandb_config_args": {"", oneOrMore},
	"--trackio_args": {"", oneOrMore}, "--hf_hub_log_args": {"", oneOrMore},
	"--predict_only": {"-x", flag}, "--seed": {"", one}, "--trust_remote_code": {"", flag},
	"--confirm_run_unsafe_code": {"", flag}, "--metadata": {"", one}, "--help": {"-h", flag},
}

func main() {
	args := os.Args[1:]
	stub.Write("lm_eval", "eval", nil)
	// The evaluation's own time (WLC_STUB_EVAL_DELAY seconds), before its
	// requests: its last request is its end.
	time.Sleep(stub.EnvSeconds("WLC_STUB_EVAL_DELAY"))
	// harness.py: arguments but no subcommand means run.
	if len(args) > 1 && args[0] != "run" && args[0] != "ls" && args[0] != "validate" {
		args = append([]string{"run"}, args...)
	}
	if len(args) == 0 || args[0] != "run" {
		usage("lm-eval", "the stub implements only `run`")
	}
	opts, err := parse(args[1:])
	if err != "" {
		usage("lm-eval run", err)
	}
	run(opts)
}

func usage(prog, msg string) {
	fmt.Fprintf(os.Stderr, "usage: %s [options]\n%s: error: %s\n", prog, prog, msg)
	os.Exit(2)
}

// parse reads run's options the way argparse does: values of nargs "+"
// run to the next option; a long option may be an unambiguous prefix.
func parse(args []string) (map[string][]string, string) {
	out := map[string][]string{}
	var extra []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			extra = append(extra, a)
			continue
		}
		name, val, hasVal := a, "", false
		if strings.HasPrefix(a, "--") {
			name, val, hasVal = strings.Cut(a, "=")
		}
		long, msg := resolve(name)
		if msg != "" {
			return nil, msg
		}
		spec := runOptions[long]
		switch spec.n {
		case flag:
			if hasVal {
				return nil, fmt.Sprintf("argument %s: ignored explicit argument '%s'", long, val)
			}
			out[long] = nil
		case one:
			if !hasVal {
				if i+1 >= len(args) || isOption(args[i+1]) {
					return nil, fmt.Sprintf("argument %s: expected one argument", long)
				}
				i++
				val = args[i]
			}
			out[long] = []string{val}
		case optional:
			if !hasVal && i+1 < len(args) && !isOption(args[i+1]) {
				i++
				val, hasVal = args[i], true
			}
			out[long] = nil
			if hasVal {
				out[long] = []string{val}
			}
		case oneOrMore:
			vals := []string{}
			if hasVal {
				vals = append(vals, val)
			}
			for i+1 < len(args) && !isOption(args[i+1]) {
				i++
				vals = append(vals, args[i])
			}
			if len(vals) == 0 {
				return nil, fmt.Sprintf("argument %s: expected at least one argument", long)
			}
			out[long] = append(out[long], vals...)
		}
	}
	if len(extra) > 0 {
		return nil, "unrecognized arguments: " + strings.Join(extra, " ")
	}
	return out, ""
}

func isOption(s string) bool { return strings.HasPrefix(s, "-") && len(s) > 1 }

func resolve(name string) (string, string) {
	if _, ok := runOptions[name]; ok {
		return name, ""
	}
	if !strings.HasPrefix(name, "--") {
		for long, spec := range runOptions {
			if spec.short == name {
				return long, ""
			}
		}
		return "", "unrecognized arguments: " + name
	}
	var matches []string
	for long := range runOptions {
		if strings.HasPrefix(long, name) {
			matches = append(matches, long)
		}
	}
	switch len(matches) {
	case 0:
		return "", "unrecognized arguments: " + name
	case 1:
		return matches[0], ""
	}
	sort.Strings(matches)
	return "", fmt.Sprintf("ambiguous option: %s could match %s", name, strings.Join(matches, ", "))
}

// modelArgs is MergeDictAction: a JSON object, or key=value lists.
func modelArgs(vals []string) map[string]string {
	kv := map[string]string{}
	if len(vals) > 0 {
		var obj map[string]any
		if json.Unmarshal([]byte(vals[0]), &obj) == nil {
			for k, v := range obj {
				kv[k] = fmt.Sprint(v)
			}
			return kv
		}
	}
	for _, v := range vals {
		for _, p := range strings.Split(v, ",") {
			k, val, ok := strings.Cut(p, "=")
			if !ok {
				fail(fmt.Sprintf("model_args item %q is not key=value", p))
			}
			kv[k] = val
		}
	}
	return kv
}

var unsafeName = regexp.MustCompile(`["<>:/|\\?*\[\]]+`)

func run(opts map[string][]string) {
	if _, ok := opts["--help"]; ok {
		fmt.Println("usage: lm-eval run --model <model> --tasks <task> ...")
		return
	}
	model := first(opts["--model"])
	if model != "local-completions" {
		fail(fmt.Sprintf("the stub serves --model local-completions, not %q", model))
	}
	var tasks []string
	for _, t := range opts["--tasks"] {
		tasks = append(tasks, strings.Split(t, ",")...)
	}
	kv := modelArgs(opts["--model_args"])
	out := first(opts["--output_path"])
	if kv["base_url"] == "" || kv["model"] == "" || len(tasks) == 0 || out == "" {
		fail("need --model_args with model and base_url, --tasks and --output_path")
	}
	c := &http.Client{Timeout: 10 * time.Second}
	results := map[string]any{}
	for _, task := range tasks {
		body, _ := json.Marshal(map[string]any{"model": kv["model"], "prompt": "Question: 1+1?", "max_tokens": 4})
		resp, err := c.Post(kv["base_url"], "application/json", bytes.NewReader(body))
		if err != nil {
			fail(err.Error())
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			fail(fmt.Sprintf("%s: %s", kv["base_url"], resp.Status))
		}
		results[task] = map[string]any{"alias": task, "exact_match,strict-match": 1.0, "exact_match_stderr,strict-match": 0.0}
	}
	fewshot := first(opts["--num_fewshot"])
	stamp := time.Now().UTC().Format("2006-01-02T15-04-05.000000")
	dir := filepath.Join(out, unsafeName.ReplaceAllString(kv["model"], "__"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fail(err.Error())
	}
	res := map[string]any{"results": results, "n-shot": map[string]any{tasks[0]: fewshot},
		"config": map[string]any{"model": model, "model_args": kv}}
	data, _ := json.MarshalIndent(res, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "results_"+stamp+".json"), data, 0o644); err != nil {
		fail(err.Error())
	}
	if _, ok := opts["--log_samples"]; ok {
		for _, task := range tasks {
			var lines []byte
			for i := range 3 {
				l, _ := json.Marshal(map[string]any{"doc_id": i, "doc": map[string]any{"question": fmt.Sprintf("%d+1?", i)},
					"target": fmt.Sprint(i + 1), "resps": [][]string{{fmt.Sprint(i + 1)}}, "filter": "strict-match",
					"metrics": []string{"exact_match"}, "exact_match": 1.0})
				lines = append(append(lines, l...), '\n')
			}
			if err := os.WriteFile(filepath.Join(dir, "samples_"+task+"_"+stamp+".jsonl"), lines, 0o644); err != nil {
				fail(err.Error())
			}
		}
	}
	for _, task := range tasks {
		fmt.Printf("|%s|exact_match|1.0|\n", task)
	}
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "stub lm_eval:", msg)
	os.Exit(1)
}
