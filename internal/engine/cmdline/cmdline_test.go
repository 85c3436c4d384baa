package cmdline

import (
	"reflect"
	"regexp"
	"testing"
)

func TestResolve(t *testing.T) {
	tests := []struct {
		tok, option string
		declared    bool
		negated     bool
		key, value  string
		abbrev      bool
	}{
		{tok: "--tensor-parallel-size", option: "--tensor-parallel-size", declared: true},
		{tok: "-tp", option: "--tensor-parallel-size", declared: true},
		{tok: "-tp=4", option: "--tensor-parallel-size", declared: true, value: "4"},
		{tok: "--tensor_parallel_size=4", option: "--tensor-parallel-size", declared: true, value: "4"},
		{tok: "--tensor-parallel", option: "--tensor-parallel-size", declared: true, abbrev: true},
		{tok: "--tensor_par=2", option: "--tensor-parallel-size", declared: true, value: "2", abbrev: true},
		{tok: "-cc", option: "--compilation-config", declared: true},
		{tok: "-cc.mode=0", option: "--compilation-config", declared: true, key: "mode", value: "0"},
		{tok: "--compilation.mode", option: "--compilation-config", declared: true, key: "mode", abbrev: true},
		{tok: "-O", option: "--compilation-config", declared: true}, // v0.10.0's alias
		{tok: "--no-enable-prefix-caching", option: "--enable-prefix-caching", declared: true, negated: true},
		{tok: "--no-enable-prefix", option: "--enable-prefix-caching", declared: true, negated: true, abbrev: true},
		{tok: "-n2", option: "--nnodes", declared: true, value: "2"},
		// exact names win over prefixes; other options resolve undeclared
		{tok: "--tokenizer", option: "--tokenizer"},
		{tok: "-q", option: "--quantization"},
		{tok: "--enforce-eager", option: "--enforce-eager"},
		{tok: "--made-up-flag", option: "--made-up-flag"},
		// ambiguous in every release: no option
		{tok: "--max-num", option: "--max-num"},
		{tok: "--enable", option: "--enable"},
	}
	for _, tc := range tests {
		m, ok := VLLMServe.Resolve(tc.tok)
		if !ok {
			t.Errorf("%s: not an option", tc.tok)
			continue
		}
		if m.Option != tc.option || (m.Flag != nil) != tc.declared || m.Negated != tc.negated || m.Key != tc.key || m.Value != tc.value || (m.Abbrev != "") != tc.abbrev {
			t.Errorf("%s: got %+v, want option %s declared %v negated %v key %q value %q abbrev %v", tc.tok, m, tc.option, tc.declared, tc.negated, tc.key, tc.value, tc.abbrev)
		}
	}
	for _, tok := range []string{"4", "-1", "-0.5", "-", "--", "{\"a\": 1}"} {
		if _, ok := VLLMServe.Resolve(tok); ok {
			t.Errorf("%q resolved as an option", tok)
		}
	}
}

func TestHumanInt(t *testing.T) {
	for in, want := range map[string]int{"32k": 32000, "32K": 32768, "1.5k": 1500, "2M": 2 << 20, "1g": 1e9, "8192": 8192} {
		if got, err := HumanInt(in); err != nil || got != want {
			t.Errorf("HumanInt(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"1.5K", "k", "32kb", "auto"} {
		if _, err := HumanInt(in); err == nil {
			t.Errorf("HumanInt(%q) accepted", in)
		}
	}
}

func TestParse(t *testing.T) {
	argv := []string{"-tp", "4", "--max-model-len", "32k", "--enforce-eager", "--compilation-config", `{"mode":3}`,
		"--compilation-config.pass_config.fuse=True", "--no-enable-prefix-caching", "--tool-call-parser", "None",
		"--max-num-batched-tokens=8K", "--quantization", "fp8"}
	p := VLLMServe.Parse(argv)
	want := map[string]any{
		"serve.tensor_parallel_size":   4,
		"serve.max_model_len":          32000,
		"serve.compilation_config":     map[string]any{"mode": 3, "pass_config": map[string]any{"fuse": true}},
		"serve.enable_prefix_caching":  false,
		"serve.tool_call_parser":       nil,
		"serve.max_num_batched_tokens": 8192,
	}
	if !reflect.DeepEqual(p.Values, want) || len(p.Errs) > 0 {
		t.Errorf("values %v errs %v, want %v", p.Values, p.Errs, want)
	}
	if rest := []string{"--enforce-eager", "--quantization", "fp8"}; !reflect.DeepEqual(p.Rest, rest) {
		t.Errorf("rest %q, want %q", p.Rest, rest)
	}
	if got := VLLMServe.Render(p.Values); !reflect.DeepEqual(got, []string{"--tensor-parallel-size", "4", "--max-model-len", "32000",
		"--max-num-batched-tokens", "8192", "--no-enable-prefix-caching", "--compilation-config", `{"mode":3,"pass_config":{"fuse":true}}`}) {
		t.Errorf("render %q", got)
	}
	bad := VLLMServe.Parse([]string{"--max-num-seqs", "many", "--trust-remote-code=true", "-tp"})
	if len(bad.Errs) != 3 {
		t.Errorf("errs %v, want 3", bad.Errs)
	}
}

// argparseNegative is argparse's _negative_number_matcher, the oracle
// negativeNumber is written from.
var argparseNegative = regexp.MustCompile(`^-\d+$|^-\d*\.\d+$`)

var negativeNumberSeeds = []string{
	"", "-", "--", "-1", "-12", "-1.5", "-.5", "-1.", "-.", "-1.2.3", "-1e3", "-x",
	"--1", "1", "-1 ", "- 1", "-١", "-0.0", "-00", "--tp", "-tp", "-1a", "-a1", "-..5",
}

func TestNegativeNumber(t *testing.T) {
	for _, s := range negativeNumberSeeds {
		if got, want := negativeNumber(s), argparseNegative.MatchString(s); got != want {
			t.Errorf("negativeNumber(%q) = %v, argparse's matcher says %v", s, got, want)
		}
	}
}

func FuzzNegativeNumber(f *testing.F) {
	for _, s := range negativeNumberSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := negativeNumber(s), argparseNegative.MatchString(s); got != want {
			t.Errorf("negativeNumber(%q) = %v, argparse's matcher says %v", s, got, want)
		}
	})
}
