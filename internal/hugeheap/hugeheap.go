// Package hugeheap asks the kernel to back wlc's heap with transparent
// huge pages (2 MiB) instead of 4 KiB pages.
//
// A cold `wlc vet` of 1,000 workloads touches ~200 MB of fresh heap: some
// 45,000 page faults, a fifth of its CPU in the kernel on the 2-CPU
// virtual machines wlc is measured on, and TLB misses in the evaluator's
// pointer chasing on top. Linux gives huge pages to anonymous memory that
// asks for them (madvise(MADV_HUGEPAGE)) under its default "madvise"
// policy, but Go's runtime does not ask (it stopped in Go 1.21.1, for
// long-running servers whose heaps shrink). wlc is a short-lived batch
// process whose heap only grows, so it asks: Advise maps a stretch of heap
// address space (untouched, so it costs no memory), advises it, and frees
// it for the heap to grow into. Cold vet of 1,000: 45,000 → 4,000 faults,
// wall 1.48 → 1.16 s, CPU 2.66 → 2.15 s; cached export CPU 1.34 → 0.73 s
// (8 and 4 interleaved runs, medians), peak RSS a few percent higher.
//
// Not on a virtual machine whose host takes free huge pages back (free
// page reporting at a huge page's order or below, as on the Firecracker
// machines wlc is measured on today): there each huge page is fresh host
// memory, and the advice made a cold vet of 1,000 1.5× slower and a
// cached export 1.7× (hostReclaimsHugePages has the figures).
//
// GODEBUG=disablethp=1, Go's own switch for huge pages on the heap, turns
// it off; so does the system's "never" policy. It is skipped where the
// reservation could fail outright (an address-space limit, strict
// overcommit), since a failed heap growth is fatal in Go.
package hugeheap

import "errors"

// Size is the heap address space wlc advises: it covers a 2,000-workload
// vet; a larger heap grows on past it as before.
const Size = 512 << 20

// Range is the heap address range Advise advised.
type Range struct {
	Start, Len uintptr
}

// ErrSkipped wraps the reasons Advise does nothing.
var ErrSkipped = errors.New("hugeheap: not advised")

// Advise prepares n bytes of heap address space for huge pages (see the
// package comment). It returns the range, or an error wrapping ErrSkipped
// that says why it did nothing. Call it once, early, before the heap
// grows and before a memory limit is set.
func Advise(n int) (Range, error) { return advise(n) }

// Check says whether Advise(n) would advise on this machine: nil, or an
// error wrapping ErrSkipped that says why not. It reserves nothing.
func Check(n int) error { return check(n) }
