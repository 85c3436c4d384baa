// Package budget bounds a computation wlc cannot interrupt: CUE's
// evaluator has no cancellation or memory limit (v0.17's API offers
// neither), so a package that doubles a string 35 times or nests
// comprehensions would run until the machine gives out. Run watches the
// heap and the clock while the computation runs and returns as soon as
// either budget is spent, saying what was being evaluated; the caller
// then reports the error and exits, which is what stops the evaluation.
package budget

import (
	"fmt"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// Limits are the budgets; zero means no limit.
type Limits struct {
	Memory uint64 // bytes of Go heap
	Time   time.Duration
}

// Progress is what the computation says it is evaluating (a file, a
// workload), for the error. A nil *Progress ignores Set.
//
// A computation that works on several goroutines (the loader's shards)
// gives each its own Lane: while lanes are open, the error names the
// lane that reported progress least recently, the one stuck in a value
// that grows (the others keep finishing theirs).
type Progress struct {
	at    atomic.Pointer[At]
	since atomic.Int64 // when at was set (Unix ns), for the parent's choice

	parent *Progress
	mu     sync.Mutex
	lanes  map[*Progress]bool
}

// At is a place in the evaluation.
type At struct {
	File string // the file being evaluated, when one is
	What string // e.g. "workload qwen3_5_b200"
}

// Set records what is being evaluated now.
func (p *Progress) Set(file, what string) {
	if p != nil {
		p.since.Store(time.Now().UnixNano())
		p.at.Store(&At{File: file, What: what})
	}
}

// Lane opens a progress of its own for one goroutine of the computation;
// Done closes it. A nil *Progress gives a nil lane.
func (p *Progress) Lane() *Progress {
	if p == nil {
		return nil
	}
	l := &Progress{parent: p}
	p.mu.Lock()
	if p.lanes == nil {
		p.lanes = map[*Progress]bool{}
	}
	p.lanes[l] = true
	p.mu.Unlock()
	return l
}

// Done closes a lane: its goroutine finished its part.
func (p *Progress) Done() {
	if p == nil || p.parent == nil {
		return
	}
	p.parent.mu.Lock()
	delete(p.parent.lanes, p)
	p.parent.mu.Unlock()
}

func (p *Progress) get() At {
	if p == nil {
		return At{}
	}
	p.mu.Lock()
	var stuck *Progress
	for l := range p.lanes {
		if l.at.Load() != nil && (stuck == nil || l.since.Load() < stuck.since.Load()) {
			stuck = l
		}
	}
	p.mu.Unlock()
	if stuck != nil {
		return stuck.get()
	}
	if a := p.at.Load(); a != nil {
		return *a
	}
	return At{}
}

// Exceeded is the error Run returns when a budget is spent.
type Exceeded struct {
	Memory bool // else time
	Limits Limits
	At     At     // Progress at that moment
	Used   uint64 // heap bytes when memory ran out
}

func (e *Exceeded) Error() string {
	what := e.At.What
	if what == "" {
		what = "the package"
	}
	if e.Memory {
		return fmt.Sprintf("evaluating %s used more than the memory budget of %s (heap %s): a value in it grows without bound (a string or list doubled again and again, nested comprehensions); fix it, or raise --max-memory if the package is just large", what, size(e.Limits.Memory), size(e.Used))
	}
	return fmt.Sprintf("evaluating %s took longer than the time budget of %s: a value in it grows without bound (a string or list doubled again and again, nested comprehensions); fix it, or raise --timeout if the package is just large", what, e.Limits.Time)
}

// Run runs f in its own goroutine and returns its result, or *Exceeded as
// soon as a budget is spent (f keeps running: the caller must exit).
func Run(l Limits, p *Progress, f func()) error {
	done := make(chan struct{})
	if l.Memory > 0 {
		// The collector works harder near the budget, so garbage alone
		// does not spend it.
		old := debug.SetMemoryLimit(int64(l.Memory))
		defer debug.SetMemoryLimit(old)
	}
	go func() { defer close(done); f() }()
	var deadline <-chan time.Time
	if l.Time > 0 {
		t := time.NewTimer(l.Time)
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	for {
		select {
		case <-done:
			return nil
		case <-deadline:
			return &Exceeded{Limits: l, At: p.get()}
		case <-tick.C:
			if l.Memory == 0 {
				continue
			}
			metrics.Read(sample)
			if used := sample[0].Value.Uint64(); used > l.Memory {
				p.settle(done)
				return &Exceeded{Memory: true, Limits: l, At: p.get(), Used: used}
			}
		}
	}
}

// laneGrace is how long a spent memory budget waits for the other lanes
// to finish theirs. A lane is named by when it last reported, and a
// shard reports only as it starts: a healthy shard that started before
// the one whose value grows, and is still running on a busy machine,
// would be named in its place. The growing one never finishes; the
// others do within milliseconds (the heap grows on meanwhile: a doubled
// string reaches about four times the budget in this time).
const laneGrace = 100 * time.Millisecond

// settle waits until at most one lane is open, the computation is done,
// or laneGrace has passed.
func (p *Progress) settle(done <-chan struct{}) {
	if p == nil {
		return
	}
	deadline := time.Now().Add(laneGrace)
	for p.open() > 1 && time.Now().Before(deadline) {
		select {
		case <-done:
			return
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// open is how many lanes are open.
func (p *Progress) open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.lanes)
}

func size(b uint64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	default:
		return fmt.Sprintf("%d MiB", b>>20)
	}
}
