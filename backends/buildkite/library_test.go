package buildkite

import (
	"bytes"
	"hash/fnv"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/wlcdev/wlc/backends/runner"
	"github.com/wlcdev/wlc/internal/plan"
)

// TestLineHash: lineHash and FNV-1a agree where chunks reads them, on
// every line of the runner scripts' library and on random bytes.
func TestLineHash(t *testing.T) {
	check := func(line []byte) {
		f := fnv.New32a()
		f.Write(line)
		if got, want := lineHash(line)&chunkMask, f.Sum32()&chunkMask; got != want {
			t.Fatalf("lineHash(%q)&chunkMask = %d, FNV-1a's %d", line, got, want)
		}
	}
	lines := 0
	for _, l := range strings.SplitAfter(runner.Library(plan.Workload{Tools: []plan.Tool{{Name: "lm_eval"}}, Datasets: []plan.Dataset{{}}, BFCL: []plan.BFCLRun{{}}}), "\n") {
		check([]byte(l))
		lines++
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := make([]byte, r.IntN(200))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		check(b)
	}
	if lines < 800 { // lib.sh and every embedded tool: 868 today
		t.Fatalf("only %d script lines checked", lines)
	}
}

// TestChunks: chunks join back to the input, and a text cuts the same way
// after any prefix once a cut line has passed (what lets steps share it).
func TestChunks(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var lib strings.Builder
	for i := range 2000 {
		lib.WriteString(strings.Repeat("x", r.IntN(60)))
		lib.WriteString(" line ")
		lib.WriteString(string(rune('a' + i%26)))
		lib.WriteString("\n")
	}
	for _, in := range []string{"", "no newline", "\n", "a\nb", strings.Repeat("same line\n", 500), lib.String()} {
		if got := bytes.Join(chunks([]byte(in)), nil); string(got) != in {
			t.Errorf("chunks of a %d-byte input join to %d bytes", len(in), len(got))
		}
	}
	a := chunks([]byte("#!/bin/bash\n# workload one\n" + lib.String()))
	b := chunks([]byte("#!/bin/bash\n# the other workload, a longer header\nx=1\n" + lib.String()))
	inA := map[string]bool{}
	for _, c := range a {
		inA[string(c)] = true
	}
	shared := 0
	for _, c := range b {
		if inA[string(c)] {
			shared += len(c)
		}
	}
	if shared < lib.Len()*9/10 {
		t.Errorf("the two scripts share %d of the common text's %d bytes as chunks", shared, lib.Len())
	}
}
