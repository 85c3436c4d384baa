package sglang

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/wlcdev/wlc/schema"
)

// TestParseLikeArgparse: the parser model reads argv as argparse does.
func TestParseLikeArgparse(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want map[string]string // primary spelling -> values joined
		err  string
	}{
		{argv: []string{"--tp", "8", "--dp=8", "--ep", "8"}, want: map[string]string{"--tp-size": "8", "--dp-size": "8", "--ep-size": "8"}},
		{argv: []string{"--tensor-parallel-size", "2", "--chunked-prefill-size", "-1"}, want: map[string]string{"--tp-size": "2", "--chunked-prefill-size": "-1"}},
		{argv: []string{"--cuda-graph-bs", "1", "2", "4", "--disable-radix-cache"}, want: map[string]string{"--cuda-graph-bs": "1 2 4", "--disable-radix-cache": ""}},
		{argv: []string{"--model-checksum", "--trust-remote-code"}, want: map[string]string{"--model-checksum": "", "--trust-remote-code": ""}},
		{argv: []string{"--t", "8"}, err: "ambiguous option: --t could match"},
		{argv: []string{"--gpu-memory-utilization", "0.9"}, err: "unrecognized arguments: --gpu-memory-utilization 0.9"},
		{argv: []string{"--tp", "eight"}, err: "argument --tp-size/--tensor-parallel-size: invalid int value: 'eight'"},
		{argv: []string{"--kv-cache-dtype", "fp8"}, err: "invalid choice: 'fp8'"},
		{argv: []string{"--context-length"}, err: "expected one argument"},
		{argv: []string{"--disable-radix-cache=true"}, err: "ignored explicit argument 'true'"},
		{argv: []string{"--cuda-graph-bs"}, err: "expected at least one argument"},
		{argv: []string{"--enable-ep-moe"}, err: "deprecated"},
		{argv: []string{"model"}, err: "unrecognized arguments: model"},
	} {
		args, errs := LaunchServer.Parse(tc.argv)
		if tc.err != "" {
			if len(errs) == 0 || !strings.Contains(errs[0].Msg, tc.err) {
				t.Errorf("%q: errors %v, want %q", tc.argv, errs, tc.err)
			}
			continue
		}
		if len(errs) > 0 {
			t.Errorf("%q: %v", tc.argv, errs)
			continue
		}
		got := map[string]string{}
		for _, a := range args {
			got[a.Option.Name()] = strings.Join(a.Values, " ")
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %v, want %v", tc.argv, got, tc.want)
		}
	}
}

// TestTypedDeclaration: every typed option names a launch_server option
// by its primary spelling, and the declaration and schema.SGLangServe (the
// mirror of #SGLangServe) hold the same fields.
func TestTypedDeclaration(t *testing.T) {
	var declared []string
	for _, ty := range TypedOptions {
		o := ty.Option()
		if o == nil || o.Name() != ty.Flag {
			t.Errorf("%s renders to %s, which is not a primary launch_server spelling", ty.Field, ty.Flag)
		}
		declared = append(declared, ty.Field)
	}
	var fields []string
	rt := reflect.TypeOf(schema.SGLangServe{})
	for i := 0; i < rt.NumField(); i++ {
		tag, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		if tag != "extra_args" {
			fields = append(fields, tag)
		}
	}
	slices.Sort(declared)
	slices.Sort(fields)
	if !slices.Equal(declared, fields) {
		t.Errorf("declared %v\nschema   %v", declared, fields)
	}
}

// TestRender: defaults are not rendered, flags are bare, values follow.
func TestRender(t *testing.T) {
	got, err := Render(&schema.SGLangServe{TPSize: 8, PPSize: 1, DPSize: 1, EPSize: 1, EnableDPAttention: true, MemFractionStatic: 0.85, ChunkedPrefillSize: -1, KVCacheDtype: "fp8_e4m3"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"--tp-size", "8", "--enable-dp-attention", "--chunked-prefill-size", "-1", "--mem-fraction-static", "0.85", "--kv-cache-dtype", "fp8_e4m3"}
	if !slices.Equal(got, want) {
		t.Errorf("%q, want %q", got, want)
	}
	if _, errs := LaunchServer.Parse(got); len(errs) > 0 {
		t.Errorf("launch_server refuses its own rendering: %v", errs)
	}
}

// TestSGLangOnly: SGLang spellings vLLM lacks are caught; shared ones not.
func TestSGLangOnly(t *testing.T) {
	for tok, want := range map[string]string{"--mem-fraction-static": "mem_fraction_static", "--tp-size=8": "tp_size", "--disable_radix_cache": "disable_radix_cache",
		"--tensor-parallel-size": "", "--kv-cache-dtype": "", "--max-model-len": ""} {
		ty, ok := SGLangOnly(tok)
		if ok != (want != "") || ty.Field != want {
			t.Errorf("%s: %q %v, want %q", tok, ty.Field, ok, want)
		}
	}
}
