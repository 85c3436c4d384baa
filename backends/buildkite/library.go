package buildkite

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/wlcdev/wlc/internal/detgzip"
	"github.com/wlcdev/wlc/internal/par"
)

// Compact steps (issue 14). Each step used to carry its whole runner
// script, base64: ~60 KB a step, 60 MB for 1,000, most of it the same
// runner library in every step. Now the files a step writes are cut into
// content-defined chunks (a chunk ends after a line whose hash says so, so
// the same text cuts the same way wherever it appears), and the chunks
// several steps of one upload share are carried once, as the upload's
// pipeline-level env LibraryVar (gzip, base64; detgzip, so the bytes are
// the same on every machine). A step carries only its own text (gzip,
// base64) and, for each file, the byte ranges to join from the library and
// its text; it rebuilds each file with head/tail and checks it against the
// sha256 of the exact file the runner produced before running anything.
//
// The library is an env value, not a string any step holds, because the
// agent interpolates `$` in step strings with the uploader's environment
// at upload and would copy a `$LibraryVar` reference into every step; the
// command reads it at run time with printenv, so it holds no `$`. A
// variable reaches every process of the job, so its size is bounded
// (libraryCap, well under Linux's 128 KiB for one environment string) and
// the step drops it (env -u) before the job's script runs.

// LibraryVar is the pipeline env variable holding an upload's shared text.
const LibraryVar = "WLC_LIBRARY"

// libraryCap bounds the library's text before compression; its env value
// is about a third of it, base64 included.
const libraryCap = 192 << 10

// libraryPath is where a step writes the decoded library.
const libraryPath = scriptDir + "/wlc-library"

// chunkMask: a line ends a chunk when its hash has these bits clear (about
// one line in 16), once the chunk holds at least minChunk bytes.
const (
	chunkMask = 15
	minChunk  = 256
)

// chunks cuts data into content-defined chunks whose concatenation is data.
func chunks(data []byte) [][]byte {
	var out [][]byte
	start := 0
	for i := 0; i < len(data); {
		end := bytes.IndexByte(data[i:], '\n')
		if end < 0 {
			break
		}
		end += i + 1
		// A line that ends a chunk shorter than minChunk cannot cut, so
		// its hash is not computed (about a third of the bytes).
		cut := end-start >= minChunk && lineHash(data[i:end])&chunkMask == 0
		i = end
		if cut {
			out = append(out, data[start:end])
			start = end
		}
	}
	if start < len(data) {
		out = append(out, data[start:])
	}
	return out
}

// lineHash agrees with the line's 32-bit FNV-1a hash in its low four
// bits, all that chunkMask reads. A product's low bits depend only on its
// factors' low bits (and an XOR's on its operands'), so FNV's prime
// 16777619 can be replaced by 3, its value mod 16: a multiply by 3 is one
// LEA, where the prime's IMUL made chunks, which hashes every byte of
// every script, 1.4 times slower (TestLineHash compares it with hash/fnv).
func lineHash(line []byte) uint32 {
	h := uint32(2166136261) // FNV's offset basis
	for _, c := range line {
		h = (h ^ uint32(c)) * 3
	}
	return h
}

// file is one file a step writes before it runs: its path and exact bytes.
type file struct {
	path string
	data []byte
	what string // for the comment above it
}

// library is one upload's shared text: the chunks its steps share, laid
// out in the order the steps first use them, then exemplars of the steps'
// own text (the first step of each kind), which end the library so that
// its last detgzip.MaxDict bytes are the dictionary each step's own text
// is compressed against: steps of one kind differ in names and numbers,
// so against an exemplar a step's ~8 KB of own text shrinks to a few
// hundred bytes.
type library struct {
	text  []byte
	sum   string         // sha256 of text, hex
	at    map[string]int // chunk -> offset in text
	steps []stepText     // per step, in order
	dict  *detgzip.Dict  // the text's last detgzip.MaxDict bytes, indexed
}

// forGoroutine is l with a dictionary of its own (a detgzip.Dict is
// scratch space too), to write steps' commands beside other goroutines.
func (l *library) forGoroutine() *library {
	c := *l
	c.dict = l.dict.Clone()
	return &c
}

// stepText is how one step rebuilds its files: per file, the ranges of
// the library and of its own text; and the own text.
type stepText struct {
	plans [][]segment
	own   []byte
}

// newLibrary picks the chunks worth sharing among the steps' files (used
// at least twice; the largest saving first, up to libraryCap) and the
// exemplars; kinds[i] names step i's kind (its runner and engine).
func newLibrary(steps [][]file, kinds []string) *library {
	type stat struct {
		count, n int
	}
	// Each file is cut once, every step on its own CPU; the counting
	// that follows keeps the steps' order.
	cut := make([][][][]byte, len(steps))
	par.Do(len(steps), func(i int) {
		for _, f := range steps[i] {
			cut[i] = append(cut[i], chunks(f.data))
		}
	})
	stats := map[string]*stat{}
	var order []string
	for _, fs := range cut {
		for _, cs := range fs {
			for _, c := range cs {
				s := stats[string(c)] // no allocation for a lookup
				if s == nil {
					k := string(c)
					s = &stat{n: len(c)}
					stats[k] = s
					order = append(order, k)
				}
				s.count++
			}
		}
	}
	var shared []string
	for _, k := range order {
		if stats[k].count >= 2 {
			shared = append(shared, k)
		}
	}
	slices.SortStableFunc(shared, func(a, b string) int {
		sa, sb := stats[a], stats[b]
		return (sb.count-1)*sb.n - (sa.count-1)*sa.n
	})
	chosen := map[string]bool{}
	size := 0
	for _, k := range shared {
		if size+len(k) <= libraryCap {
			chosen[k] = true
			size += len(k)
		}
	}
	lib := &library{at: map[string]int{}}
	lib.text = make([]byte, 0, size+detgzip.MaxDict)
	for _, k := range order {
		if chosen[k] {
			lib.at[k] = len(lib.text)
			lib.text = append(lib.text, k...)
		}
	}
	lib.steps = make([]stepText, len(steps))
	par.Do(len(steps), func(i int) { lib.steps[i] = lib.plan(cut[i]) })
	if len(lib.text) == 0 {
		// Nothing shared (one step): no library, no dictionary.
		lib.dict = detgzip.NewDict(nil)
		return lib
	}
	seen := map[string]bool{}
	room := detgzip.MaxDict
	for i, st := range lib.steps {
		if !seen[kinds[i]] && len(st.own) <= room {
			seen[kinds[i]] = true
			room -= len(st.own)
			lib.text = append(lib.text, st.own...)
		}
	}
	lib.dict = detgzip.NewDict(lib.text[len(lib.text)-min(len(lib.text), detgzip.MaxDict):])
	sum := sha256.Sum256(lib.text)
	lib.sum = hex.EncodeToString(sum[:])
	return lib
}

// envValue is the library as the pipeline's env value: gzip, base64 in
// 76-column lines (base64 -d reads them).
func (l *library) envValue() string {
	return wrap76(base64.StdEncoding.EncodeToString(detgzip.Compress(l.text)))
}

func wrap76(s string) string {
	var b strings.Builder
	b.Grow(len(s) + len(s)/76 + 1)
	for len(s) > 76 {
		b.WriteString(s[:76])
		b.WriteByte('\n')
		s = s[76:]
	}
	b.WriteString(s)
	b.WriteByte('\n')
	return b.String()
}

// segment is a byte range of the library (lib) or of the step's own text.
type segment struct {
	lib      bool
	off, len int
}

// plan lays a step's files (each cut into chunks) out as ranges of the
// library and of its own text, which holds what the library lacks;
// adjacent ranges merge.
func (l *library) plan(files [][][]byte) stepText {
	// Each chunk is looked up once, and the own text allocated once at
	// its size: grown by appends, it was a fifth of the library's time.
	n := 0
	for _, cs := range files {
		n += len(cs)
	}
	at := make([]int, 0, n)
	own := 0
	for _, cs := range files {
		for _, c := range cs {
			off, ok := l.at[string(c)]
			if !ok {
				off = -1
				own += len(c)
			}
			at = append(at, off)
		}
	}
	st := stepText{plans: make([][]segment, 0, len(files)), own: make([]byte, 0, own)}
	for _, cs := range files {
		var segs []segment
		add := func(s segment) {
			if n := len(segs); n > 0 && segs[n-1].lib == s.lib && segs[n-1].off+segs[n-1].len == s.off {
				segs[n-1].len += s.len
				return
			}
			segs = append(segs, s)
		}
		for _, c := range cs {
			off := at[0]
			at = at[1:]
			if off >= 0 {
				add(segment{lib: true, off: off, len: len(c)})
				continue
			}
			add(segment{off: len(st.own), len: len(c)})
			st.own = append(st.own, c...)
		}
		st.plans = append(st.plans, segs)
	}
	return st
}

// writeFiles emits the lines with which step i writes its files (fs):
// the library from the env, its own text decompressed against the
// library's dictionary into textPath, each file joined from their ranges
// and checked by sha256.
func (l *library) writeFiles(b *strings.Builder, i int, fs []file, textPath string) {
	st := l.steps[i]
	if len(l.text) > 0 {
		fmt.Fprintf(b, "printenv %s > /dev/null || { echo 'wlc: the env %s this step rebuilds its scripts from is not set: upload the whole pipeline file wlc wrote' >&2; exit 1; }\n", LibraryVar, LibraryVar)
		fmt.Fprintf(b, "printenv %s | base64 -d | gzip -dc > %s\n", LibraryVar, libraryPath)
		fmt.Fprintf(b, "echo %s | sha256sum -c --quiet\n", shellWord(l.sum+"  "+libraryPath))
	}
	switch dictLen := min(len(l.text), detgzip.MaxDict); {
	case len(st.own) == 0:
	case dictLen == 0:
		fmt.Fprintf(b, "base64 -d <<'WLC_TEXT' | gzip -dc > %s\n", shellWord(textPath))
		b.WriteString(wrap76(base64.StdEncoding.EncodeToString(detgzip.Compress(st.own))))
		b.WriteString("WLC_TEXT\n")
	default:
		b.WriteString("# The step's own text: gzip whose first block is the library's end, stored.\n{\n")
		b.WriteString("  printf '")
		for _, c := range detgzip.DictPrefix(dictLen) {
			fmt.Fprintf(b, "\\%03o", c)
		}
		b.WriteString("'\n")
		fmt.Fprintf(b, "  tail -c %d %s\n", dictLen, libraryPath)
		b.WriteString("  base64 -d <<'WLC_TEXT'\n")
		b.WriteString(wrap76(base64.StdEncoding.EncodeToString(l.dict.CompressAfter(st.own))))
		fmt.Fprintf(b, "WLC_TEXT\n} | gzip -dc | tail -c +%d > %s\n", dictLen+1, shellWord(textPath))
	}
	for j, f := range fs {
		sum := sha256.Sum256(f.data)
		fmt.Fprintf(b, "# %s (%d bytes)\n{\n", f.what, len(f.data))
		for _, s := range st.plans[j] {
			src := libraryPath
			if !s.lib {
				src = textPath
			}
			if s.off == 0 {
				fmt.Fprintf(b, "  head -c %d %s\n", s.len, shellWord(src))
			} else {
				fmt.Fprintf(b, "  head -c %d %s | tail -c %d\n", s.off+s.len, shellWord(src), s.len)
			}
		}
		fmt.Fprintf(b, "} > %s\n", shellWord(f.path))
		fmt.Fprintf(b, "echo %s | sha256sum -c --quiet\n", shellWord(hex.EncodeToString(sum[:])+"  "+f.path))
	}
}
