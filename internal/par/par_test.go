package par

import (
	"runtime"
	"sync/atomic"
	"testing"
)

func TestDoRunsEachOnce(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, 1000} {
		counts := make([]int32, n)
		Do(n, func(i int) { atomic.AddInt32(&counts[i], 1) })
		for i, c := range counts {
			if c != 1 {
				t.Fatalf("n=%d: f(%d) ran %d times", n, i, c)
			}
		}
	}
}

func TestDoWithStatePerGoroutine(t *testing.T) {
	var made atomic.Int32
	const n = 500
	owner := make([]*int, n)
	DoWith(n, func() *int { made.Add(1); return new(int) }, func(s *int, i int) {
		*s++ // unsynchronized: the race detector fails this if s is shared
		owner[i] = s
	})
	if m := int(made.Load()); m < 1 || m > runtime.GOMAXPROCS(0) {
		t.Errorf("%d states for GOMAXPROCS %d", m, runtime.GOMAXPROCS(0))
	}
	total := 0
	seen := map[*int]bool{}
	for _, s := range owner {
		if !seen[s] {
			seen[s] = true
			total += *s
		}
	}
	if total != n {
		t.Errorf("states counted %d pieces, want %d", total, n)
	}
}
