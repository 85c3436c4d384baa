package cmdline

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/wlcdev/wlc/internal/engine/sglang"
	"github.com/wlcdev/wlc/schema"
)

// TestSGLangDeclaration: every declared option is a launch_server option
// by its primary spelling, and the typed flags and schema.SGLangServe (the
// mirror of #SGLangServe) hold the same fields.
func TestSGLangDeclaration(t *testing.T) {
	var declared []string
	for _, f := range SGLangServe.Flags {
		if o := sglang.LaunchServer.Exact(f.Name); o == nil || o.Name() != f.Name {
			t.Errorf("%s is not a primary launch_server spelling", f.Name)
		}
		if f.Field != "" {
			declared = append(declared, strings.TrimPrefix(f.Field, "sglang."))
		}
	}
	for _, f := range SGLangBench.Flags {
		if o := sglang.BenchServing.Exact(f.Name); o == nil || o.Name() != f.Name {
			t.Errorf("%s is not a primary bench_serving spelling", f.Name)
		}
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

// TestSGLangRenderAndResolve: defaults are not rendered, the rendering
// parses, and argparse's abbreviations resolve to the typed flag.
func TestSGLangRenderAndResolve(t *testing.T) {
	s := &schema.SGLangServe{TPSize: 8, PPSize: 1, DPSize: 1, EPSize: 1, EnableDPAttention: true, MemFractionStatic: 0.85, ChunkedPrefillSize: -1, KVCacheDtype: "fp8_e4m3"}
	got := SGLangServe.Render(Fields("sglang.", s))
	want := []string{"--tp-size", "8", "--enable-dp-attention", "--chunked-prefill-size", "-1", "--mem-fraction-static", "0.85", "--kv-cache-dtype", "fp8_e4m3"}
	if !slices.Equal(got, want) {
		t.Errorf("%q, want %q", got, want)
	}
	if _, errs := sglang.LaunchServer.Parse(got); len(errs) > 0 {
		t.Errorf("launch_server refuses the rendering: %v", errs)
	}
	for tok, field := range map[string]string{"--tp": "sglang.tp_size", "--tensor-parallel-size": "sglang.tp_size", "--ep": "sglang.ep_size", "--mem-frac": "sglang.mem_fraction_static"} {
		m, ok := SGLangServe.Resolve(tok)
		if !ok || m.Flag == nil || m.Flag.Field != field {
			t.Errorf("%s resolves to %+v, want %s", tok, m.Flag, field)
		}
	}
	p := SGLangServe.Parse([]string{"--tp", "8", "--dp", "8", "--enable-dp-attention", "--cuda-graph-max-bs", "256"})
	if p.Values["sglang.tp_size"] != 8 || p.Values["sglang.enable_dp_attention"] != true || !slices.Equal(p.Rest, []string{"--cuda-graph-max-bs", "256"}) {
		t.Errorf("parsed %v rest %q", p.Values, p.Rest)
	}
}
