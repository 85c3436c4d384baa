// Package par runs independent pieces of work on every CPU. Results go
// into slots indexed by the piece, so callers merge them in input order
// and their output does not depend on scheduling.
package par

import (
	"runtime"
	"sync"
)

// Do runs f(0), …, f(n-1) on up to GOMAXPROCS goroutines and returns when
// all are done.
func Do(n int, f func(i int)) {
	DoWith(n, func() struct{} { return struct{}{} }, func(_ struct{}, i int) { f(i) })
}

// DoWith is Do for work that needs state a goroutine may not share (a
// compressor's scratch space): each goroutine makes its own with newState.
func DoWith[S any](n int, newState func() S, f func(s S, i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		s := newState()
		for i := range n {
			f(s, i)
		}
		return
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Go(func() {
			s := newState()
			for i := range next {
				f(s, i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
