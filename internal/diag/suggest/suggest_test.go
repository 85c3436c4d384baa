package suggest

import (
	"slices"
	"testing"
)

func TestClosest(t *testing.T) {
	cands := []string{"startup_timeout_s", "num_fewshot", "num_speculative_tokens", "num_speculative_tokens_per_batch_size", "max_num_seqs", "model", "--max-num-seqs", "--max-model-len"}
	for _, tc := range []struct{ name, want string }{
		{"startup_timeout", "startup_timeout_s"}, // the perf-eval typo
		{"max_num_seq", "max_num_seqs"},          // edit distance
		{"--max-num-seq", "--max-num-seqs"},      // flags too
		{"fewshot", "num_fewshot"},               // a shortened name
		{"num_tokens", "num_speculative_tokens"}, // the shortest holding every word
		{"xyz", ""},                              // nothing near
		{"completely_unrelated_name", ""},        // nothing near
	} {
		if got := Closest(cands, tc.name); got != tc.want {
			t.Errorf("Closest(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"×b", "×c", 1}} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestClosestLookalike(t *testing.T) {
	cands := []string{"H200", "B200", "H100", "HOO"}
	for _, tc := range []struct{ name, want string }{
		{"Н200", "H200"}, // Cyrillic En
		{"Ｈ２００", "H200"}, // fullwidth, nearer by skeleton than by edits
		{"НОО", "HOO"},   // every letter Cyrillic
		{"Β200", "B200"}, // Greek Beta
	} {
		if got := Closest(cands, tc.name); got != tc.want {
			t.Errorf("Closest(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestLookalikes(t *testing.T) {
	for _, tc := range []struct{ msg, want string }{
		{"unknown profile Н200; known profiles: H200, B200",
			"(Н200 only looks like H200: its Н is U+041D (Cyrillic), not the ASCII H; retype it)"},
		{`model "Qwen/Qwеn3-8B" not found`, // Cyrillic е inside a path
			"(Qwen/Qwеn3-8B only looks like Qwen/Qwen3-8B: its е is U+0435 (Cyrillic), not the ASCII e; retype it)"},
		{"workload ｍodel_Ａ and mοdel (twice)", // fullwidth, Greek omicron
			"(ｍodel_Ａ only looks like model_A: its ｍ is U+FF4D (fullwidth), not the ASCII m, its Ａ is U+FF21 (fullwidth), not the ASCII A; mοdel only looks like model: its ο is U+03BF (Greek), not the ASCII o; retype it)"},
		{"--max‐num-seqs is unknown", // a hyphen that is not -
			"(--max‐num-seqs only looks like --max-num-seqs: its ‐ is U+2010 (punctuation), not the ASCII -; retype it)"},
		{"reason: общий хост, Сервер", ""},              // Russian words pass for no ASCII word
		{"needs 2–8 GPUs on a prefill–decode pair", ""}, // en dashes in prose
		{"unknown profile H200", ""},
		{"Ж200 and é200", ""}, // not drawn like ASCII
	} {
		if got := Lookalikes(tc.msg); got != tc.want {
			t.Errorf("Lookalikes(%q)\n got %q\nwant %q", tc.msg, got, tc.want)
		}
		// Idempotent: the hint's own words add nothing.
		if tc.want != "" {
			if again := Lookalikes(tc.msg + " " + tc.want); again != tc.want {
				t.Errorf("Lookalikes of the hinted message:\n got %q\nwant %q", again, tc.want)
			}
		}
	}
}

func TestValues(t *testing.T) {
	precisions := []string{"bf16", "fp16", "fp8", "int8", "int4", "nvfp4", "mxfp4", "mxfp8", "mxfp4_fp8"}
	profiles := []string{"H200", "B200", "MI300X", "MI355X", "B300", "GB300_SLURM", "GB300", "XPU"}
	for _, tc := range []struct {
		cands []string
		v     string
		want  []string
	}{
		{profiles, "h200", []string{"H200"}},
		{profiles, "H200", nil}, // a value of the set
		{profiles, "mi355", []string{"MI355X"}},
		{profiles, "H100", nil}, // one edit from H200 and B200... and not meant
		{profiles, "GB300_slurm", []string{"GB300_SLURM"}},
		{profiles, "GB30", nil}, // another number
		{profiles, "H20", nil},  // a GPU of its own
		{profiles, "X300", nil}, // another initial
		{profiles, "gb300", []string{"GB300"}},
		{profiles, "slurm", []string{"GB300_SLURM"}},
		{precisions, "fp4", []string{"nvfp4", "mxfp4"}},
		{precisions, "bf61", nil},
		{precisions, "bfl16", []string{"bf16"}},
		{precisions, "", nil},
		// A numeronym's word: the runtime k8s written out.
		{[]string{"docker", "k8s", "slurm"}, "kubernetes", []string{"k8s"}},
		{[]string{"docker", "k8s", "slurm"}, "kubernetez", nil},
	} {
		if got := Values(tc.cands, tc.v); !slices.Equal(got, tc.want) {
			t.Errorf("Values(%q) = %q, want %q", tc.v, got, tc.want)
		}
	}
}
