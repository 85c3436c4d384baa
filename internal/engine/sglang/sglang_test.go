package sglang

import (
	"reflect"
	"strings"
	"testing"
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
