package hugeheap

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime/metrics"
	"strings"
	"testing"
	"unsafe"

	"github.com/wlcdev/wlc/internal/testenv"
)

// The advised range is one the kernel marks for huge pages (VmFlags "hg"
// in /proc/self/smaps), the reservation is freed, and the heap reuses
// the range: the next large allocation lands in it. It runs in a process
// of its own, whose heap is as fresh as wlc's when it calls Advise (in
// this one, -count=N would leave earlier reservations free below it).
func TestAdviseMarksHeapRange(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAdviseMarksHeapRange$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), childEnv+"=1", "GODEBUG=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("in a fresh process: %v\n%s", err, out)
		}
		if s := string(out); strings.Contains(s, "--- SKIP") {
			testenv.Missing(t, "in a fresh process: "+strings.TrimSpace(s))
		}
		return
	}
	r, err := Advise(64 << 20)
	if errors.Is(err, ErrSkipped) && !strings.Contains(err.Error(), "madvise") {
		t.Skip(err.Error())
	}
	if err != nil {
		t.Fatalf("Advise: %v", err)
	}
	// The reservation is freed, not left in the heap the collector paces
	// by: a 64 MiB object still counted would put the next collection
	// past 128 MiB, and a 512 MiB one (wlc's) past a gigabyte.
	goal := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(goal)
	if g := goal[0].Value.Uint64(); g >= uint64(r.Len) {
		t.Errorf("after Advise the next collection is due at a %d-byte heap, more than the %d-byte reservation: the reservation still counts as live", g, r.Len)
	}
	flags, err := vmFlags(r.Start)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(" "+flags+" ", " hg ") {
		t.Errorf("the mapping holding %#x has VmFlags %q, want hg (MADV_HUGEPAGE)", r.Start, flags)
	}
	// The page allocator takes the lowest free run, which may begin a few
	// pages before the range (free pages of the heap's first chunk): all
	// but a huge page's worth of the allocation must lie inside it.
	b := make([]byte, 16<<20)
	p := uintptrOf(b)
	lo, hi := max(p, r.Start), min(p+uintptr(len(b)), r.Start+r.Len)
	if hi <= lo || hi-lo < uintptr(len(b))-2<<20 {
		t.Errorf("a 16 MiB allocation after Advise is at %#x, mostly outside the advised %#x+%#x: the heap did not reuse the range", p, r.Start, r.Len)
	}
}

// childEnv marks the process TestAdviseMarksHeapRange runs its check in.
const childEnv = "WLC_HUGEHEAP_TEST_CHILD"

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(&b[0])) }

// GODEBUG=disablethp=1 (Go's switch for huge pages on the heap) turns
// Advise off.
func TestAdviseHonoursDisableTHP(t *testing.T) {
	t.Setenv("GODEBUG", "madvdontneed=1,disablethp=1")
	if _, err := Advise(64 << 20); !errors.Is(err, ErrSkipped) || !strings.Contains(err.Error(), "disablethp") {
		t.Fatalf("Advise with GODEBUG=disablethp=1 = %v, want it skipped for disablethp", err)
	}
}

// vmFlags returns the VmFlags line of the /proc/self/smaps mapping that
// holds addr.
func vmFlags(addr uintptr) (string, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x", &lo, &hi); n == 2 && strings.Contains(line, " ") {
			in = lo <= addr && addr < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmFlags:")), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("no mapping in /proc/self/smaps holds %#x", addr)
}
