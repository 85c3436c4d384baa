package vllmflags

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func catalog(t *testing.T, label string) *Catalog {
	t.Helper()
	c, ok := Builtin().Lookup(label)
	if !ok {
		t.Fatalf("no built-in catalog %s", label)
	}
	return New(c)
}

func TestCheckServe(t *testing.T) {
	main := catalog(t, "main-2026-08-17")
	old := catalog(t, "v0.10.0")
	tests := []struct {
		name string
		cat  *Catalog
		args []string
		want []string // "index: message substring"
	}{
		{"valid spellings", main, []string{"--tensor-parallel-size", "8", "-tp", "8", "--max_num_seqs", "256", "--max-model-len=auto", "--enable-prefix-caching", "--no-enable-prefix-caching", "--trust-remote-code"}, nil},
		{"typo suggests the real flag", main, []string{"--max-num-seqz", "8"}, []string{"0: has no option --max-num-seqz; did you mean --max-num-seqs?"}},
		// argparse reads an unambiguous prefix as the option, an alias as its flag
		{"abbreviation", main, []string{"--max-num-seq", "8", "--enforce", "-tp", "2", "--no-enable-prefix"}, nil},
		{"value outside choices", main, []string{"--kv-cache-dtype", "fp9"}, []string{"1: --kv-cache-dtype fp9: vLLM main-2026-08-17 accepts auto, bfloat16"}},
		// perf-eval build 311: the pinned nightly rejected this key.
		{"unknown JSON config key (dotted)", main, []string{"--attention-config.use_trtllm_ragged_deepseek_prefill=True"}, []string{`0: --attention-config has no key "use_trtllm_ragged_deepseek_prefill"`}},
		{"unknown JSON config key (object)", main, []string{"--speculative-config", `{"method":"mtp","num_tokens":2}`}, []string{`1: --speculative-config has no key "num_tokens" in vLLM main-2026-08-17; did you mean "num_speculative_tokens"?`}},
		{"known JSON config keys", main, []string{"--speculative-config", `{"method":"mtp","num_speculative_tokens":2}`, "--attention_config.use_fp4_indexer_cache=True"}, nil},
		{"flag newer than the image", old, []string{"--attention-config", `{"backend":"FLASHINFER"}`}, []string{"0: vllm serve in vLLM v0.10.0 has no option --attention-config"}},
		{"store_true takes no value", main, []string{"--enable-expert-parallel=1"}, []string{"0: --enable-expert-parallel takes no value"}},
		{"missing value", main, []string{"--block-size"}, []string{"0: --block-size needs a value"}},
		{"nargs + consumes values", main, []string{"--served-model-name", "a", "b", "--max-num-seqs", "4"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, f := range tc.cat.CheckServe(tc.args) {
				got = append(got, f.Message)
				_ = f
			}
			if len(got) != len(tc.want) {
				t.Fatalf("findings = %q, want %d matching %q", got, len(tc.want), tc.want)
			}
			for i, f := range tc.cat.CheckServe(tc.args) {
				idx, sub, _ := strings.Cut(tc.want[i], ": ")
				if got := strings.TrimSpace(idx); got != strconv.Itoa(f.Index) || !strings.Contains(f.Message, sub) {
					t.Errorf("finding %d = %d: %q, want %s: …%s…", i, f.Index, f.Message, idx, sub)
				}
			}
		})
	}
}

func TestCheckBench(t *testing.T) {
	main := catalog(t, "main-2026-08-17")
	got := main.CheckBench([]string{"--model", "m", "--dataset-name", "random", "--random-input-len", "8", "--num-warmups", "128", "--max-concurrency", "4", "--bogus"})
	var msgs []string
	for _, f := range got {
		msgs = append(msgs, f.Message)
	}
	want := []string{"vllm bench serve in vLLM main-2026-08-17 has no option --bogus (check the image's vLLM version, or drop the flag)"}
	if diff := cmp.Diff(want, msgs); diff != "" {
		t.Errorf("bench findings (-want +got):\n%s", diff)
	}
}
