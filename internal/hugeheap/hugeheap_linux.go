package hugeheap

import (
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

func advise(n int) (Range, error) {
	if err := check(n); err != nil {
		return Range{}, err
	}
	return reserve(n)
}

func check(n int) error {
	reason := skipReason(n)
	if reason == "" {
		reason = hostReclaimsHugePages("/")
	}
	if reason != "" {
		return fmt.Errorf("%w: %s", ErrSkipped, reason)
	}
	return nil
}

// reserve maps n bytes of heap, advises them for huge pages and frees
// them for the heap to grow into.
func reserve(n int) (Range, error) {
	// A large object comes from freshly mapped, zeroed memory: the
	// runtime neither clears nor touches it, so this costs address space,
	// not memory.
	b := make([]byte, n)
	r := Range{Start: uintptr(unsafe.Pointer(&b[0])), Len: uintptr(n)}
	err := syscall.Madvise(b, syscall.MADV_HUGEPAGE)
	runtime.KeepAlive(b) // b is dead from here: the collection frees it
	// Free the object: its pages, still advised, are the heap's next.
	runtime.GC()
	if err != nil {
		return Range{}, fmt.Errorf("%w: madvise: %v", ErrSkipped, err)
	}
	return r, nil
}

// skipReason says why advising could do nothing or do harm, or "".
func skipReason(n int) string {
	for _, kv := range strings.Split(os.Getenv("GODEBUG"), ",") {
		if strings.TrimSpace(kv) == "disablethp=1" {
			return "GODEBUG=disablethp=1"
		}
	}
	if data, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled"); err == nil && strings.Contains(string(data), "[never]") {
		return "transparent huge pages are off ([never])"
	} else if err != nil {
		return "no transparent huge pages (" + err.Error() + ")"
	}
	// Heap growth that fails is fatal in Go: reserve only where it cannot.
	if unsafe.Sizeof(uintptr(0)) < 8 {
		return "a 32-bit address space has no room to spare"
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &lim); err == nil && lim.Cur != ^uint64(0) && lim.Cur < 4*uint64(n) {
		return fmt.Sprintf("the address-space limit (ulimit -v, %d bytes) leaves no room", lim.Cur)
	}
	if data, err := os.ReadFile("/proc/sys/vm/overcommit_memory"); err == nil && strings.TrimSpace(string(data)) == "2" {
		return "strict overcommit (vm.overcommit_memory=2) would charge the reservation"
	}
	return ""
}

// hostReclaimsHugePages says why huge pages would cost more than they
// save on a virtual machine that hands free memory back to its host, or
// "". With free page reporting (virtio-balloon, Hyper-V) the guest
// kernel reports each free block of page_reporting_order and up to the
// hypervisor, which unmaps it; when the order is at most a huge page's,
// free huge pages are reported soon after they are freed, and a
// huge-page fault mostly takes one: 2 MiB of fresh host memory, which
// the host faults in as well. On the 2-CPU Firecracker machines wlc is
// measured on (order 9, 2 MiB), cold vet of 1,000 workloads interleaved
// with plain cue vet as wlcbench runs them, 12 runs each (medians):
// 2.13 s wall, 3.75 s CPU of which 1.20 s in the kernel with the advice;
// 1.42 s, 2.64 s and 0.20 s without it. Cached export of 1,000, 8 runs:
// 1.21 against 0.72 s wall. wlcbench (N=1,000, 5 interleaved
// repetitions) had vet at 0.75× and export at 0.63× the wall time
// without it. Where blocks are reported only above a huge page's order,
// the huge pages the heap takes come from free blocks of their own size
// or split larger ones, which the host still backs, and the advice saves
// what the package comment says. root is the file system root (a test's
// fixture, or "/").
func hostReclaimsHugePages(root string) string {
	data, err := os.ReadFile(filepath.Join(root, "sys/module/page_reporting/parameters/page_reporting_order"))
	if err != nil {
		return "" // no free page reporting in this kernel
	}
	// Unset (no reporting device registered) reads as -1, or as its
	// unsigned value.
	order, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || order < 0 {
		return ""
	}
	pmdShift := 21 // 2 MiB, the x86-64 and arm64 (4 KiB pages) PMD size
	if data, err := os.ReadFile(filepath.Join(root, "sys/kernel/mm/transparent_hugepage/hpage_pmd_size")); err == nil {
		if size, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64); err == nil && size > 0 {
			pmdShift = bits.Len64(size) - 1
		}
	}
	hugeOrder := pmdShift - (bits.Len(uint(os.Getpagesize())) - 1)
	if order > hugeOrder {
		return ""
	}
	return fmt.Sprintf("the host takes back free memory in blocks of order %d and up (page_reporting_order) and a huge page is order %d: every huge page would be fresh host memory", order, hugeOrder)
}
