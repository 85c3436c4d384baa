package schema

import (
	"math"
	"slices"
	"testing"
)

// TestSweepCountsNeverWrap: a ladder's rungs rise and stop at end, and a
// derived num_prompts is at least prompts_per_concurrency × c or
// saturates, whatever the counts (the schema bounds them; Go must still
// never turn a huge count into a small one).
func TestSweepCountsNeverWrap(t *testing.T) {
	for _, tc := range []struct {
		l    ConcurrencyLadder
		want []int
	}{
		{ConcurrencyLadder{Start: 1, End: 10, Factor: 2}, []int{1, 2, 4, 8}},
		{ConcurrencyLadder{Start: 3, End: 100, Factor: 6148914691236517206}, []int{3}}, // 3 × f wraps to 2
		{ConcurrencyLadder{Start: 1, End: math.MaxInt, Factor: 2}, nil},                // 63 rungs, the last 2^62
		{ConcurrencyLadder{Start: math.MaxInt, End: math.MaxInt, Factor: 3}, []int{math.MaxInt}},
		{ConcurrencyLadder{Start: 5, End: 4, Factor: 2}, nil},
	} {
		got := Concurrency{Ladder: &tc.l}.Values()
		if !slices.IsSorted(got) || len(got) > 0 && got[len(got)-1] > tc.l.End {
			t.Errorf("%+v: rungs %v", tc.l, got)
		}
		if tc.want != nil && !slices.Equal(got, tc.want) {
			t.Errorf("%+v: rungs %v, want %v", tc.l, got, tc.want)
		}
		if tc.l.Start == 1 && tc.l.End == math.MaxInt && (len(got) != 63 || got[62] != 1<<62) {
			t.Errorf("%+v: %d rungs, last %d", tc.l, len(got), got[len(got)-1])
		}
	}
	for _, tc := range []struct{ ppc, c, min int }{
		{4611686018427387905, 4, 1}, // 2^62+1: × 4 wraps to 4
		{3, 3074457345618258603, 1}, // × 3 wraps to 1
		{math.MaxInt, math.MaxInt, 1},
		{2, 8, 100},
	} {
		b := VLLMBench{Sweep: &BenchSweep{
			Shapes:                []SweepShape{{InputLen: 1, OutputLen: 1}},
			Concurrency:           Concurrency{List: []int{tc.c}},
			PromptsPerConcurrency: tc.ppc,
			MinPrompts:            tc.min,
		}}
		np := b.AllConfigs()[0].NumPrompts.Values[0]
		if np < tc.min || np < tc.ppc || np < tc.c {
			t.Errorf("prompts_per_concurrency %d × concurrency %d (min %d): num_prompts %d", tc.ppc, tc.c, tc.min, np)
		}
	}
}
