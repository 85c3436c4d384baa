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

// TestDoWithStatePerGoroutine: no state is used by two goroutines at once
// (each piece holds its state's flag across a yield, so sharing shows
// without the race detector), and at most GOMAXPROCS states are made.
func TestDoWithStatePerGoroutine(t *testing.T) {
	type state struct {
		busy atomic.Bool
		n    int
	}
	var made atomic.Int32
	const n = 500
	owner := make([]*state, n)
	DoWith(n, func() *state { made.Add(1); return &state{} }, func(s *state, i int) {
		if !s.busy.CompareAndSwap(false, true) {
			t.Errorf("piece %d: its state is in use by another goroutine", i)
			return
		}
		runtime.Gosched()
		s.n++
		owner[i] = s
		s.busy.Store(false)
	})
	if m := int(made.Load()); m < 1 || m > runtime.GOMAXPROCS(0) {
		t.Errorf("%d states for GOMAXPROCS %d", m, runtime.GOMAXPROCS(0))
	}
	total := 0
	seen := map[*state]bool{}
	for _, s := range owner {
		if s != nil && !seen[s] {
			seen[s] = true
			total += s.n
		}
	}
	if total != n {
		t.Errorf("states counted %d pieces, want %d", total, n)
	}
}
