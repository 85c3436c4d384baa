package cmdline

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// TestBenchOwnedCUE regenerates schema/bench_owned.cue, the schema's copy
// of VLLMBench's owned options (the exact-name rule lives in CUE, on the
// user's field), and fails when the committed file differs (WLC_UPDATE=1
// rewrites it).
func TestBenchOwnedCUE(t *testing.T) {
	var b strings.Builder
	b.WriteString("// Code generated from cmdline.VLLMBench (internal/engine/cmdline/vllm.go) by\n")
	b.WriteString("// TestBenchOwnedCUE (WLC_UPDATE=1 go test ./internal/engine/cmdline); DO NOT EDIT.\n\n")
	b.WriteString("package schema\n\n")
	width := 0
	for _, f := range VLLMBench.Flags {
		width = max(width, len(f.Name))
	}
	// A set, not a list: the rules test a name with a field lookup, where
	// list.Contains made an evaluation context for every element it
	// compared (~40 for each bench arg of every config).
	b.WriteString("// #BenchOwnedArgs are `vllm bench serve` options wlc sets itself, as a set.\n")
	b.WriteString("#BenchOwnedArgs: {\n")
	for _, f := range VLLMBench.Flags {
		key := fmt.Sprintf("%q:", strings.TrimPrefix(f.Name, "--"))
		fmt.Fprintf(&b, "\t%-*s true\n", width+1, key)
	}
	b.WriteString("}\n\n")
	b.WriteString("// #BenchArgFields names the typed field an owned bench arg comes from; the\n")
	b.WriteString("// other owned args belong to the runner.\n")
	b.WriteString("#BenchArgFields: {\n")
	for _, f := range VLLMBench.Flags {
		if f.Field != "" {
			key := fmt.Sprintf("%q:", strings.TrimPrefix(f.Name, "--"))
			fmt.Fprintf(&b, "\t%-*s %q\n", width+1, key, f.Field)
		}
	}
	b.WriteString("}\n")
	testenv.Generated(t, "schema/bench_owned.cue", []byte(b.String()), "WLC_UPDATE=1 go test ./internal/engine/cmdline (from cmdline.VLLMBench)")
}
