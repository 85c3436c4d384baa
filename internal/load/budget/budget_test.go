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
