package hugeheap

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
	"unsafe"
)

func advise(n int) (Range, error) {
	if reason := skipReason(n); reason != "" {
		return Range{}, fmt.Errorf("%w: %s", ErrSkipped, reason)
	}
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
