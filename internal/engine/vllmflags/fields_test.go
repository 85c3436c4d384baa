package vllmflags

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRenderField: a serve field renders as the option its name spells,
// in the form the release's catalog declares, or is refused with what to
// write instead.
func TestRenderField(t *testing.T) {
	v13 := catalog(t, "v0.13.0")
	old := catalog(t, "v0.11.0")
	tests := []struct {
		name  string
		cat   *Catalog
		field string
		value any
		want  []string
		err   string // substring of the error
	}{
		{"BooleanOptionalAction true", v13, "enable_chunked_prefill", true, []string{"--enable-chunked-prefill"}, ""},
		{"BooleanOptionalAction false", v13, "enable_chunked_prefill", false, []string{"--no-enable-chunked-prefill"}, ""},
		{"store_true false is argparse's default", v13, "disable_log_stats", false, nil, ""},
		{"store_true true", v13, "disable_log_stats", true, []string{"--disable-log-stats"}, ""},
		{"BooleanOptionalAction enforce_eager false", v13, "enforce_eager", false, []string{"--no-enforce-eager"}, ""},
		{"int", v13, "max_num_partial_prefills", int64(2), []string{"--max-num-partial-prefills", "2"}, ""},
		{"int refused a string", v13, "max_num_partial_prefills", "two", nil, "takes an integer"},
		{"float", v13, "gpu_memory_utilization", 0.5, []string{"--gpu-memory-utilization", "0.5"}, ""},
		{"choice", v13, "all2all_backend", "naive", []string{"--all2all-backend", "naive"}, ""},
		{"not a choice", v13, "all2all_backend", "bogus", nil, "--all2all-backend bogus: vLLM v0.13.0 accepts"},
		{"JSON object, keys sorted", v13, "structured_outputs_config", map[string]any{"backend": "xgrammar", "disable_any_whitespace": true}, []string{"--structured-outputs-config", `{"backend":"xgrammar","disable_any_whitespace":true}`}, ""},
		{"JSON option refused a number", v13, "structured_outputs_config", int64(1), nil, "takes a JSON object"},
		{"switch refused a string", v13, "enable_chunked_prefill", "yes", nil, `write true or false, not the string "yes"`},
		{"option newer than the release", old, "all2all_backend", "naive", nil, "vLLM v0.13.0, main-2026-08-17 have it"},
		{"misspelled", v13, "max_num_seq", int64(4), nil, "did you mean max_num_seqs?"},
		{"the --no- form", v13, "no_enable_prefix_caching", true, nil, "write enable_prefix_caching: false"},
		{"one value, not a list", v13, "max_num_seqs", []any{int64(1), int64(2)}, nil, "takes one value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.cat.RenderField(tc.field, tc.value)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q (rendered %q)", err, tc.err, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("rendered (-want +got):\n%s", diff)
			}
			// What RenderField renders, CheckServe accepts.
			if f := tc.cat.CheckServe(got); len(f) > 0 {
				t.Errorf("CheckServe refuses the rendering: %v", f)
			}
		})
	}
}

// TestValueTypes: an option's argparse type is checked in argv too (int,
// float, vLLM's human-readable sizes, auto).
func TestValueTypes(t *testing.T) {
	main := catalog(t, "main-2026-08-17")
	for _, c := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"--max-num-seqs", "256"}, true},
		{[]string{"--max-num-seqs", "many"}, false},
		{[]string{"--gpu-memory-utilization", "0.9"}, true},
		{[]string{"--gpu-memory-utilization", "most"}, false},
		{[]string{"--max-model-len", "32k"}, true},
		{[]string{"--max-model-len", "auto"}, true},
		{[]string{"--max-model-len", "long"}, false},
		{[]string{"--max-num-batched-tokens", "8K"}, true},
	} {
		if got := len(main.CheckServe(c.args)) == 0; got != c.ok {
			t.Errorf("%q accepted = %v, want %v: %v", c.args, got, c.ok, main.CheckServe(c.args))
		}
	}
}
