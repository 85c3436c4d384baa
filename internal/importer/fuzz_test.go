package importer

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/parser"

	"github.com/wlcdev/wlc/internal/diag"
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
	// Absent, the seeds below and the committed corpus still run.
	files, _ := filepath.Glob(filepath.Join(perfEvalCorpus(f), "workloads", "*.yaml"))
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
		r := within(t, "PerfEval", data, func() Result { return PerfEval("w.yaml", data) })
		checkFindings(t, r.Findings, "w.yaml", data)
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

// FuzzPerfEvalProfiles imports arbitrary bytes as perf-eval's
// lib/gpu_profiles.yaml: it must return within seconds, never panic,
// place every finding in the file it read, and emit CUE whose only
// declaration is the profiles struct, holding exactly the profiles it
// names (no value from the YAML escaped its place).
func FuzzPerfEvalProfiles(f *testing.F) {
	for _, p := range []string{"lib/gpu_profiles.yaml", "variants/pr30-gb300-slurm/lib/gpu_profiles.yaml", "variants/pr37-intel-xpu/lib/gpu_profiles.yaml", "variants/pr61-b300-docker/lib/gpu_profiles.yaml"} {
		if data, err := os.ReadFile(filepath.Join(perfEvalCorpus(f), p)); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("S:\n  queue: q\n  server_runtime: slurm\n  env:\n    \"PERF_EVAL_SLURM_X\\n}\\nevil: 1\": \"a\\nb\"\n    PERF_EVAL_SLURM_CONTAINER_RUNTIME: pyxis\n    PERF_EVAL_SLURM_CONTAINER_MOUNTS: \"/a:/b,x,/c:/d:ro\"\n"))
	f.Add([]byte("K:\n  queue: \"q\\\"}\"\n  server_runtime: native\n  k8s_plugin: amd\n  hf_cache_volume: {persistentVolumeClaim: {claimName: c}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := within(t, "PerfEvalProfiles", data, func() ProfilesResult { return PerfEvalProfiles("p.yaml", data, map[string]int{"S": 3}) })
		checkFindings(t, r.Findings, "p.yaml", data)
		if r.Findings.HasErrors() != (r.Source == nil) {
			t.Fatalf("errors %v but source %q", r.Findings.HasErrors(), r.Source)
		}
		if r.Source == nil {
			return
		}
		file, err := parser.ParseFile("profiles.cue", r.Source)
		if err != nil {
			t.Fatalf("source does not parse: %v\n%s", err, r.Source)
		}
		var decls []string
		var names []string
		for _, d := range file.Decls {
			fd, ok := d.(*ast.Field)
			if !ok {
				continue
			}
			l, _, _ := ast.LabelName(fd.Label)
			decls = append(decls, l)
			if st, ok := fd.Value.(*ast.StructLit); ok {
				for _, e := range st.Elts {
					if pf, ok := e.(*ast.Field); ok {
						n, _, _ := ast.LabelName(pf.Label)
						names = append(names, n)
					}
				}
			}
		}
		if len(decls) != 1 || decls[0] != "profiles" || strings.Join(names, ",") != strings.Join(r.Names, ",") {
			t.Errorf("declares %v with profiles %v, want profiles only with %v:\n%s", decls, names, r.Names, r.Source)
		}
	})
}

// perfEvalCorpus is perf-eval's folder of the reference corpus, where
// ../shared (or WLC_SHARED) holds it: fuzz seeds, not a requirement (the
// seeds written here and the committed corpus run without it).
func perfEvalCorpus(f *testing.F) string {
	shared := os.Getenv("WLC_SHARED")
	if shared == "" {
		shared = filepath.Join(testenv.RepoRoot(f), "..", "shared")
	}
	return filepath.Join(shared, "corpus", "perf-eval")
}

// within is f's result, failing t if f has not returned after 10 s.
func within[T any](t *testing.T, what string, data []byte, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case r := <-done:
		return r
	case <-time.After(10 * time.Second):
		t.Fatalf("%s has not returned after 10 s on:\n%q", what, data)
		panic("unreachable")
	}
}

// checkFindings fails t on an internal error and on a finding placed
// outside file (as yaml.v3 counts data's lines).
func checkFindings(t *testing.T, findings diag.List, file string, data []byte) {
	t.Helper()
	lines := yamlLines(data)
	for _, d := range findings {
		if strings.Contains(d.Message, "internal error") {
			t.Errorf("%s\non:\n%q", d, data)
		}
		if d.File != file || d.Line > lines {
			t.Errorf("finding outside the file (%d lines): %s", lines, d)
		}
	}
}
