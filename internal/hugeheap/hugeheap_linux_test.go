package hugeheap

import (
	"bufio"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/metrics"
	"strings"
	"testing"
	"unsafe"

	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// The advised range is one the kernel marks for huge pages (VmFlags "hg"
// in /proc/self/smaps), the reservation is freed, and the heap reuses
// the range: the next large allocation lands in it. It runs in a process
// of its own, whose heap is as fresh as wlc's when it calls Advise (in
// this one, -count=N would leave earlier reservations free below it).
func TestReserveMarksHeapRange(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestReserveMarksHeapRange$", "-test.count=1", "-test.v")
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
	// reserve, not Advise: on a host that takes free huge pages back
	// (hostReclaimsHugePages) Advise does nothing, but the reservation
	// is still what it does elsewhere.
	if reason := skipReason(64 << 20); reason != "" {
		t.Skip(reason)
	}
	r, err := reserve(64 << 20)
	if err != nil {
		t.Fatalf("reserve: %v", err)
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

// childEnv marks the process TestReserveMarksHeapRange runs its check in.
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

// Free page reporting at a huge page's order or below turns the advice
// off; reporting of larger blocks, none, or a kernel without it leave it
// on. The files are a fixture of the two sysfs entries it reads.
func TestHostReclaimsHugePages(t *testing.T) {
	const (
		orderFile = "sys/module/page_reporting/parameters/page_reporting_order"
		pmdFile   = "sys/kernel/mm/transparent_hugepage/hpage_pmd_size"
	)
	hugeOrder := 21 - (bits.Len(uint(os.Getpagesize())) - 1) // 2 MiB huge pages
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string // a part of the reason; "" for none
	}{
		{"no page reporting", nil, ""},
		{"no device registered", map[string]string{orderFile: "-1\n"}, ""},
		{"no device registered, unsigned", map[string]string{orderFile: "4294967295\n"}, ""},
		{"huge-page order", map[string]string{orderFile: fmt.Sprintf("%d\n", hugeOrder), pmdFile: "2097152\n"}, fmt.Sprintf("blocks of order %d and up (page_reporting_order) and a huge page is order %d", hugeOrder, hugeOrder)},
		{"below huge-page order", map[string]string{orderFile: fmt.Sprintf("%d\n", hugeOrder-4), pmdFile: "2097152\n"}, fmt.Sprintf("blocks of order %d and up", hugeOrder-4)},
		{"huge-page order, PMD size unreadable", map[string]string{orderFile: fmt.Sprintf("%d\n", hugeOrder)}, fmt.Sprintf("a huge page is order %d:", hugeOrder)},
		{"above huge-page order", map[string]string{orderFile: fmt.Sprintf("%d\n", hugeOrder+2), pmdFile: "2097152\n"}, ""},
		{"larger huge pages", map[string]string{orderFile: fmt.Sprintf("%d\n", hugeOrder+2), pmdFile: fmt.Sprintf("%d\n", 2097152<<4)}, fmt.Sprintf("a huge page is order %d:", hugeOrder+4)},
		{"garbage", map[string]string{orderFile: "nine\n", pmdFile: "2097152\n"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for name, data := range tc.files {
				path := filepath.Join(root, name)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got := hostReclaimsHugePages(root)
			switch {
			case tc.want == "" && got != "":
				t.Errorf("hostReclaimsHugePages = %q, want none (the advice stays on)", got)
			case tc.want != "" && !strings.Contains(got, tc.want):
				t.Errorf("hostReclaimsHugePages = %q, want a reason holding %q", got, tc.want)
			}
		})
	}
}

// On this machine, Advise does what skipReason and hostReclaimsHugePages
// say: it advises where neither objects and skips, naming the reason,
// where one does (free page reporting on the VMs wlc is measured on);
// Check says the same without reserving.
func TestAdviseFollowsHostReclaim(t *testing.T) {
	want := skipReason(64 << 20)
	if want == "" {
		want = hostReclaimsHugePages("/")
	}
	checked := Check(64 << 20)
	_, err := Advise(64 << 20)
	switch {
	case want == "" && (err != nil || checked != nil):
		t.Fatalf("Advise = %v, Check = %v, want the range advised", err, checked)
	case want != "" && (!errors.Is(err, ErrSkipped) || !strings.Contains(err.Error(), want)):
		t.Fatalf("Advise = %v, want it skipped: %s", err, want)
	case want != "" && (checked == nil || checked.Error() != err.Error()):
		t.Fatalf("Check = %v, want Advise's %v", checked, err)
	}
}
