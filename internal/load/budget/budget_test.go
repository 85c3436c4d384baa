package budget

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestRun(t *testing.T) {
	var p Progress
	if err := Run(Limits{Memory: 1 << 30, Time: time.Minute}, &p, func() {}); err != nil {
		t.Fatalf("a quick computation: %v", err)
	}

	block := make(chan struct{})
	defer close(block)
	err := Run(Limits{Time: 50 * time.Millisecond}, &p, func() {
		p.Set("w.cue", "workload w")
		<-block
	})
	var ex *Exceeded
	if !errors.As(err, &ex) || ex.Memory || ex.At.File != "w.cue" || !strings.Contains(err.Error(), "evaluating workload w took longer than the time budget of 50ms") {
		t.Fatalf("time: %v", err)
	}

	var keep [][]byte
	var stop atomic.Bool // the computation outlives Run; end it here
	defer stop.Store(true)
	err = Run(Limits{Memory: 64 << 20}, nil, func() {
		for range 1 << 10 {
			if stop.Load() {
				return
			}
			keep = append(keep, make([]byte, 1<<20))
			time.Sleep(time.Millisecond)
		}
	})
	if !errors.As(err, &ex) || !ex.Memory || ex.Used <= 64<<20 || !strings.Contains(err.Error(), "memory budget of 64 MiB") {
		t.Fatalf("memory: %v", err)
	}
}

// TestLanes: with goroutines reporting on lanes, the error names the lane
// stuck longest, not the last one to report; once the lanes are done,
// the computation's own progress.
func TestLanes(t *testing.T) {
	var p Progress
	p.Set("pkg", "the package")
	stuck, busy := p.Lane(), p.Lane()
	stuck.Set("a.cue", "workload a")
	time.Sleep(2 * time.Millisecond)
	busy.Set("b.cue", "workload b")
	if got := p.get(); got.File != "a.cue" {
		t.Errorf("lanes a (stuck) and b (recent): named %+v, want a", got)
	}
	time.Sleep(2 * time.Millisecond)
	stuck.Set("c.cue", "workload c") // a moved on; b is now the stuck one
	if got := p.get(); got.File != "b.cue" {
		t.Errorf("after a moved on: named %+v, want b", got)
	}
	stuck.Done()
	busy.Done()
	if got := p.get(); got.File != "pkg" {
		t.Errorf("lanes done: named %+v, want the package", got)
	}
	var none *Progress
	none.Lane().Set("x", "y") // a nil progress ignores its lanes
}

// TestLaneGrace: when the memory budget is spent while a lane that
// started earlier is still running (a healthy shard on a busy machine),
// that lane is given time to finish, and the error names the lane that
// is still open: the one whose value grows.
func TestLaneGrace(t *testing.T) {
	var p Progress
	healthy, growing := p.Lane(), p.Lane()
	healthy.Set("ok.cue", "the workloads of ok.cue")
	time.Sleep(2 * time.Millisecond)
	growing.Set("bomb.cue", "the workloads of bomb.cue")
	go func() {
		time.Sleep(30 * time.Millisecond)
		healthy.Done()
	}()
	block := make(chan struct{})
	defer close(block)
	err := Run(Limits{Memory: 1}, &p, func() { <-block }) // any heap spends it
	var ex *Exceeded
	if !errors.As(err, &ex) || !ex.Memory {
		t.Fatalf("want the memory budget spent, got %v", err)
	}
	if ex.At.File != "bomb.cue" {
		t.Errorf("named %+v, want the lane still open (bomb.cue), not the one that finished", ex.At)
	}
}
