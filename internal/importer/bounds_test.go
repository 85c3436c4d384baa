package importer

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// laughs is the billion-laughs document: each level an anchored list of
// ten aliases of the one before, so depth levels expand to 10^depth
// nodes from a few hundred bytes. at is where it is used.
func laughs(depth int, at string) string {
	var b strings.Builder
	b.WriteString("x0: &a0 lol\n")
	for i := 1; i <= depth; i++ {
		fmt.Fprintf(&b, "x%d: &a%d [", i, i)
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	return b.String() + strings.ReplaceAll(at, "LAST", fmt.Sprintf("*a%d", depth))
}

// TestAliasExpansionBounded: a small YAML whose aliases expand to more
// nodes than wlc's bound, or never end, is refused at the alias in the
// time its parse takes, wherever the alias is used (an unknown key the
// importer renders as a comment, a value it converts, a key).
func TestAliasExpansionBounded(t *testing.T) {
	head := base + "vllm: {model: m/x-FP8, serve_args: -tp 8}\n"
	cases := []struct {
		name, yaml, want string
	}{
		{"unknown key (the 1.6 KB file of the issue)", head + laughs(9, "owner: LAST\n"),
			"w.yaml:11:45: error: the aliases expand to more than 10000 YAML nodes (wlc's bound; alias *a3 crosses it); write the values out instead of nesting aliases"},
		{"anchors only, never used", head + laughs(9, ""),
			"w.yaml:11:45: error: the aliases expand to more than 10000 YAML nodes"},
		{"a converted value: lm_eval.model_args", base[:strings.Index(base, "lm_eval")] + laughs(9, "vllm: {model: m/x-FP8}\nlm_eval: {model_args: {x: LAST}, tasks: [{name: gsm8k}]}\n"),
			"error: the aliases expand to more than 10000 YAML nodes"},
		{"a converted value: vllm_bench metadata", head + laughs(9, "vllm_bench: {configs: [{name: a, input_len: 1, output_len: 1, max_concurrency: 1, num_prompts: 1, metadata: {x: LAST}}]}\n"),
			"error: the aliases expand to more than 10000 YAML nodes"},
		{"wide, not deep: 20001 aliases of one list", head + "big: &b [1, 2]\nmany: [" + strings.Repeat("*b, ", 5001) + "*b]\n",
			"error: the aliases expand to more than 10000 YAML nodes"},
		{"a sequence holding itself", head + "owner: &me [a, *me]\n", "w.yaml:7:16: error: alias *me is inside the value of its own anchor &me, so it never ends; write the value out"},
		{"a mapping holding itself", head + "owner: &me {k: {j: *me}}\n", "w.yaml:7:20: error: alias *me is inside the value of its own anchor &me"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan Result, 1)
			go func() { done <- PerfEval("w.yaml", []byte(tc.yaml)) }()
			var r Result
			select {
			case r = <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("PerfEval has not returned after 20 s on a %d-byte file", len(tc.yaml))
			}
			if !r.Refused() || !strings.Contains(findings(r), tc.want) {
				t.Errorf("findings:\n%s\nwant one containing %q", findings(r), tc.want)
			}
		})
	}
}

// TestAliasesWithinBoundImported: aliases a person writes (a value shared
// by two blocks) are still converted, expanded.
func TestAliasesWithinBoundImported(t *testing.T) {
	r := PerfEval("w.yaml", []byte("gpu: H200\nnum_gpus: 8\nvllm: {model: m/x-FP8, serve_args: &args -tp 8}\nlm_eval:\n  tasks:\n    - &t {name: gsm8k}\nnote: *args\n"))
	if r.Refused() {
		t.Fatalf("refused:\n%s", findings(r))
	}
	if !strings.Contains(string(r.Source), `tensor_parallel_size: 8`) || !strings.Contains(string(r.Source), `//   note: &args -tp 8`) {
		t.Errorf("source:\n%s", r.Source)
	}
}

// TestFileSizeBounded: a file over the YAML bound is refused before it
// is parsed, naming the bound.
func TestFileSizeBounded(t *testing.T) {
	big := base + "vllm: {model: m/x-FP8}\n# " + strings.Repeat("x", 1<<20) + "\n"
	r := PerfEval("w.yaml", []byte(big))
	if want := "w.yaml: error: it is 1.0 MiB, over wlc's bound of 1 MiB for a YAML workload or recipe"; !r.Refused() || !strings.Contains(findings(r), want) {
		t.Errorf("findings:\n%s\nwant %q", findings(r), want)
	}
}

// TestNodesWithoutGPUCount: num_nodes with neither num_gpus nor
// gpus_per_node is refused at num_nodes (FuzzPerfEval found it panicking
// on the absent num_gpus field).
func TestNodesWithoutGPUCount(t *testing.T) {
	r := PerfEval("w.yaml", []byte("gpu: GB300\nnum_nodes: 2\nvllm: {model: org/m}\nbfcl: {test_categories: [simple_python]}\n"))
	want := "w.yaml:2:12: error: num_nodes: num_nodes is 2 but num_gpus is not given (perf-eval's default is 1 GPU), which does not divide into 2 nodes; set num_gpus or gpus_per_node"
	if !r.Refused() || !strings.Contains(findings(r), want) {
		t.Errorf("findings:\n%s\nwant %q", findings(r), want)
	}
}
