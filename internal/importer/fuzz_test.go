package importer

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// FuzzPerfEval imports arbitrary bytes as a perf-eval workload: the
// importer must return within seconds (no alias expansion, however
// nested, and no file, however large, takes longer), never panic, never
// emit CUE where a value escaped its place (the "internal error" findings
// of PerfEvalAs), place every finding in the file it read, and give the
// same answer twice. Seeds: the perf-eval corpus when ../shared is there,
// the shapes below and testdata/fuzz/FuzzPerfEval.
func FuzzPerfEval(f *testing.F) {
	shared := os.Getenv("WLC_SHARED")
	if shared == "" {
		shared = filepath.Join(testenv.RepoRoot(f), "..", "shared")
	}
	// Absent, the seeds below and the committed corpus still run.
	files, _ := filepath.Glob(filepath.Join(shared, "corpus", "perf-eval", "workloads", "*.yaml"))
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(base + "vllm: {model: m/x-FP8, serve_args: \"-tp 8 --kv-transfer-config '{\\\"a\\\": 1}'\"}\n"))
	f.Add([]byte(laughs(3, "vllm: {model: m}\nlm_eval: {model_args: LAST, tasks: [{name: gsm8k}]}\n")))
	f.Add([]byte("gpu: H200\nnum_gpus: 8\nvllm: {model: &m org/x}\nsglang: {model: *m}\nbfcl: {test_categories: [simple_python]}\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("gpu: \"H200\\n}\\nworkloads: x: 1\"\nnum_gpus: 8\nvllm: {model: \"m\\\"\\n\"}\nlm_eval: {tasks: [{name: \"g\\u0000\"}]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		done := make(chan Result, 1)
		go func() { done <- PerfEval("w.yaml", data) }()
		var r Result
		select {
		case r = <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("PerfEval has not returned after 10 s on:\n%q", data)
		}
		lines := yamlLines(data)
		for _, d := range r.Findings {
			if strings.Contains(d.Message, "internal error") {
				t.Errorf("%s\non:\n%q", d, data)
			}
			if d.File != "w.yaml" || d.Line > lines {
				t.Errorf("finding outside the file (%d lines): %s", lines, d)
			}
		}
		if r.Refused() != (r.Source == nil) {
			t.Errorf("refused %v but source %q", r.Refused(), r.Source)
		}
		again := PerfEval("w.yaml", data)
		if !bytes.Equal(again.Source, r.Source) || findings(again) != findings(r) {
			t.Errorf("two imports differ:\n%s%s\n---\n%s%s", findings(r), r.Source, findings(again), again.Source)
		}
	})
}

// yamlLines is how many lines yaml.v3 sees: it breaks lines at \r\n, \r,
// \n and at NEL, LS and PS (U+0085, U+2028, U+2029), as YAML 1.1 does (the
// fuzzer's first finding was a file of three lone \r: four lines).
func yamlLines(data []byte) int {
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	n := 1
	for _, r := range s {
		switch r {
		case '\n', '\r', '\u0085', '\u2028', '\u2029':
			n++
		}
	}
	return n
}
