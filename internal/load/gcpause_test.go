package load

import (
	"runtime/debug"
	"sync"
	"testing"
)

// Concurrent loads (the tests run several) pause the collector together:
// it stays off while any of them reads its files and comes back with the
// setting it had, whatever order they finish in. (Each saving and
// restoring its own would leave it off for good when the first to pause
// is the first to finish.)
func TestPauseGCRestoresSetting(t *testing.T) {
	orig := debug.SetGCPercent(137)
	defer debug.SetGCPercent(orig)
	percent := func() int { p := debug.SetGCPercent(-1); debug.SetGCPercent(p); return p }

	a := pauseGC()
	b := pauseGC()
	if got := percent(); got != -1 {
		t.Fatalf("while paused the collector's percent is %d, want -1 (off)", got)
	}
	a()
	if got := percent(); got != -1 {
		t.Fatalf("with one load still paused the percent is %d, want -1", got)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			resume := pauseGC()
			resume()
			resume() // a second call (the deferred one) does nothing
		})
	}
	wg.Wait()
	b()
	if got := percent(); got != 137 {
		t.Fatalf("after every load resumed the percent is %d, want the 137 it was", got)
	}
	// The count is back to zero, not below: a later load pauses again.
	c := pauseGC()
	defer c()
	if got := percent(); got != -1 {
		t.Fatalf("a load after the others pauses the collector to %d, want -1 (a resume counted twice?)", got)
	}
}
