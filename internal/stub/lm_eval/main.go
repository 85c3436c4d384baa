// Command lm_eval is a stand-in for lm-evaluation-harness in tests: it
// reads --model_args (model=..., base_url=<completions URL>), --tasks and
// --output_path, sends one completion request to base_url and writes what
// lm-evaluation-harness's EvaluationTracker writes: <output_path>/<model,
// sanitized>/results_<date>.json and, with --log_samples,
// samples_<task>_<date>.jsonl (one JSON line per document). It records its
// argv (internal/stub).
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/wlcdev/wlc/internal/stub"
)

func main() {
	args := os.Args[1:]
	stub.Write("lm_eval", "eval", nil)
	margs, _ := stub.Flag(args, "--model_args")
	kv := map[string]string{}
	for _, p := range strings.Split(margs, ",") {
		k, v, _ := strings.Cut(p, "=")
		kv[k] = v
	}
	tasks, _ := stub.Flag(args, "--tasks")
	out, _ := stub.Flag(args, "--output_path")
	if kv["base_url"] == "" || tasks == "" || out == "" {
		fail("need --model_args with base_url, --tasks and --output_path")
	}
	body, _ := json.Marshal(map[string]any{"model": kv["model"], "prompt": "Question: 1+1?", "max_tokens": 4})
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Post(kv["base_url"], "application/json", bytes.NewReader(body))
	if err != nil {
		fail(err.Error())
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		fail(fmt.Sprintf("%s: %s", kv["base_url"], resp.Status))
	}
	res := map[string]any{"results": map[string]any{tasks: map[string]any{"exact_match,strict-match": 1.0}},
		"config": map[string]any{"model": "local-completions", "model_args": margs}}
	data, _ := json.MarshalIndent(res, "", "  ")
	// lm-eval: re.sub(r"[\"<>:/\|\\?\*\[\]]+", "__", model_name) and a
	// date id of datetime.now().isoformat() with ':' replaced by '-'.
	dir := filepath.Join(out, regexp.MustCompile(`["<>:/|\\?*\[\]]+`).ReplaceAllString(kv["model"], "__"))
	date := strings.ReplaceAll(time.Now().Format("2006-01-02T15:04:05.000000"), ":", "-")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fail(err.Error())
	}
	if err := os.WriteFile(filepath.Join(dir, "results_"+date+".json"), data, 0o644); err != nil {
		fail(err.Error())
	}
	if stub.Has(args, "--log_samples") {
		var lines []byte
		for i := range 3 {
			l, _ := json.Marshal(map[string]any{"doc_id": i, "doc": map[string]any{"question": fmt.Sprintf("%d+1?", i)},
				"target": fmt.Sprint(i + 1), "resps": [][]string{{fmt.Sprint(i + 1)}}, "filter": "strict-match",
				"metrics": []string{"exact_match"}, "exact_match": 1.0})
			lines = append(append(lines, l...), '\n')
		}
		if err := os.WriteFile(filepath.Join(dir, "samples_"+tasks+"_"+date+".jsonl"), lines, 0o644); err != nil {
			fail(err.Error())
		}
	}
	fmt.Printf("|%s|exact_match|1.0|\n", tasks)
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "stub lm_eval:", msg)
	os.Exit(1)
}
