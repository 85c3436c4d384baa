package suggest

import "testing"

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
