package detgzip_test

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/wlcdev/wlc/internal/detgzip"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// inputs covers the edges: empty, one byte, no repeats, long runs (maximum
// lengths and distance 1), repeats at the window's far end, every byte
// value, and the project's own shell and Python (what wlc compresses).
func inputs(t *testing.T) map[string][]byte {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 100_000)
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	far := append(bytes.Clone(random[:40_000]), random[:40_000]...)
	allBytes := make([]byte, 256*3)
	for i := range allBytes {
		allBytes[i] = byte(i)
	}
	m := map[string][]byte{
		"empty":     nil,
		"one":       []byte("x"),
		"two":       []byte("xy"),
		"three":     []byte("aaa"),
		"run":       bytes.Repeat([]byte("a"), 100_000),
		"run2":      bytes.Repeat([]byte("ab"), 70_001),
		"random":    random,
		"far":       far,
		"all bytes": allBytes,
		"text":      []byte(strings.Repeat("the quick brown fox jumps over the lazy dog\n", 500)),
	}
	for _, f := range []string{"backends/runner/lib.sh", "backends/runner/ingest.py", "backends/runner/bfcl.py"} {
		data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), f))
		if err != nil {
			t.Fatal(err)
		}
		m[f] = data
	}
	return m
}

// TestRoundTrip: Go's gzip reader gives back every input, and a second
// compression gives the same bytes.
func TestRoundTrip(t *testing.T) {
	for name, in := range inputs(t) {
		z := detgzip.Compress(in)
		if !bytes.Equal(z, detgzip.Compress(in)) {
			t.Errorf("%s: two compressions differ", name)
		}
		r, err := gzip.NewReader(bytes.NewReader(z))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(out, in) {
			t.Errorf("%s: round trip differs (%d bytes in, %d out)", name, len(in), len(out))
		}
		if len(in) > 1000 && name != "random" && name != "far" && len(z) > len(in)/2 {
			t.Errorf("%s: %d bytes compress to %d", name, len(in), len(z))
		}
	}
}

// TestGzipTool: the gzip the jobs run decodes every input (gzip -dc, with
// its CRC and length check).
func TestGzipTool(t *testing.T) {
	gz := testenv.LookPath(t, "gzip")
	for name, in := range inputs(t) {
		cmd := exec.Command(gz, "-dc")
		cmd.Stdin = bytes.NewReader(detgzip.Compress(in))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || stderr.Len() > 0 {
			t.Fatalf("%s: gzip -dc: %v %s", name, err, stderr.String())
		}
		if !bytes.Equal(out, in) {
			t.Errorf("%s: gzip -dc gives %d bytes, want %d", name, len(out), len(in))
		}
	}
}

// TestPinned: the output of a fixed input is pinned, so a change to the
// encoder (which would change every exported pipeline) is deliberate.
func TestPinned(t *testing.T) {
	in := []byte(strings.Repeat("#!/usr/bin/env bash\nset -euo pipefail\necho \"$WLC_MODEL\" ${#A[@]}\n", 40) + "end\n")
	sum := sha256.Sum256(detgzip.Compress(in))
	const want = "3a9277877ec577f0c18062e2edb1143416db54632d6b039ce74dcfe1058d4358"
	if got := hex.EncodeToString(sum[:]); got != want {
		t.Errorf("Compress of the pinned input hashes to %s, want %s: the encoder's output changed; if on purpose, update the pin (and the goldens)", got, want)
	}
}

// TestDict: a member written as DictPrefix, the dictionary, then
// CompressAfter decodes (Go's reader and gzip -dc) to dictionary + data,
// and the dictionary shrinks data that resembles it.
func TestDict(t *testing.T) {
	gz := testenv.LookPath(t, "gzip")
	in := inputs(t)
	for _, tc := range []struct{ dict, data string }{
		{"text", "backends/runner/lib.sh"},
		{"backends/runner/lib.sh", "backends/runner/lib.sh"},
		{"backends/runner/ingest.py", "text"},
		{"empty", "text"},
		{"one", "empty"},
		{"run", "run2"},
	} {
		dict, data := in[tc.dict], in[tc.data]
		if len(dict) > detgzip.MaxDict {
			dict = dict[len(dict)-detgzip.MaxDict:]
		}
		tail := detgzip.CompressAfter(dict, data)
		member := append(append(detgzip.DictPrefix(len(dict)), dict...), tail...)
		want := append(bytes.Clone(dict), data...)
		r, err := gzip.NewReader(bytes.NewReader(member))
		if err != nil {
			t.Fatal(err)
		}
		if out, err := io.ReadAll(r); err != nil || !bytes.Equal(out, want) {
			t.Errorf("%s after %s: Go's reader: %v, %d bytes, want %d", tc.data, tc.dict, err, len(out), len(want))
		}
		cmd := exec.Command(gz, "-dc")
		cmd.Stdin = bytes.NewReader(member)
		if out, err := cmd.Output(); err != nil || !bytes.Equal(out, want) {
			t.Errorf("%s after %s: gzip -dc: %v, %d bytes, want %d", tc.data, tc.dict, err, len(out), len(want))
		}
		if tc.dict == tc.data && len(tail) > len(data)/20 {
			t.Errorf("%s after itself: %d bytes, want a few back-references", tc.data, len(tail))
		}
	}
}

// TestDictReused: a Dict restores its index after each call, so reusing
// it for other inputs gives what a fresh one gives.
func TestDictReused(t *testing.T) {
	in := inputs(t)
	dict := in["backends/runner/ingest.py"]
	d := detgzip.NewDict(dict)
	for _, name := range []string{"text", "backends/runner/lib.sh", "run", "text", "backends/runner/ingest.py"} {
		if got, want := d.CompressAfter(in[name]), detgzip.CompressAfter(dict, in[name]); !bytes.Equal(got, want) {
			t.Errorf("%s: a reused Dict gives %d bytes, a fresh one %d", name, len(got), len(want))
		}
	}
}

// TestDictClone: clones compress at once on other goroutines (the race
// detector watches their scratch space) and give what the original gives.
func TestDictClone(t *testing.T) {
	in := inputs(t)
	dict := in["backends/runner/ingest.py"]
	d := detgzip.NewDict(dict)
	names := []string{"text", "backends/runner/lib.sh", "run", "backends/runner/bfcl.py"}
	got := make([][]byte, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		c := d.Clone()
		wg.Go(func() { got[i] = c.CompressAfter(in[name]) })
	}
	wg.Wait()
	for i, name := range names {
		if want := d.CompressAfter(in[name]); !bytes.Equal(got[i], want) {
			t.Errorf("%s: a clone gives %d bytes, the original %d", name, len(got[i]), len(want))
		}
	}
}

func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("hello hello hello"))
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := gzip.NewReader(bytes.NewReader(detgzip.Compress(in)))
		if err != nil {
			t.Fatal(err)
		}
		out, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(out, in) {
			t.Fatalf("round trip: %v", err)
		}
		// The first half as a dictionary for the second.
		dict, data := in[:min(len(in)/2, detgzip.MaxDict)], in[min(len(in)/2, detgzip.MaxDict):]
		member := append(append(detgzip.DictPrefix(len(dict)), dict...), detgzip.CompressAfter(dict, data)...)
		if r, err = gzip.NewReader(bytes.NewReader(member)); err != nil {
			t.Fatal(err)
		}
		if out, err = io.ReadAll(r); err != nil || !bytes.Equal(out, in) {
			t.Fatalf("round trip with a dictionary: %v", err)
		}
	})
}
