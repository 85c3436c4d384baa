package buildkite

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

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
