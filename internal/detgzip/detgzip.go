// Package detgzip writes gzip files whose bytes depend on the input alone:
// not on the Go version, the machine or the time. Generated pipelines carry
// compressed scripts and are golden-tested and compared across machines,
// and compress/flate promises no particular output (its encoder has changed
// between Go releases), so wlc compresses with its own encoder: LZ77 with
// hash chains and one-step lazy matching over DEFLATE's 32 KiB window, and
// the fixed Huffman codes of RFC 1951 §3.2.6 (no code tables to build, so
// nothing beyond this file decides a bit). Any gzip reader decodes it
// (`gzip -dc`, compress/gzip); the tests check both, and pin the output of
// a fixed input.
package detgzip

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"slices"
)

const (
	window    = 1 << 15
	minMatch  = 3
	maxMatch  = 258
	hashBits  = 15
	maxChain  = 64 // candidates tried per position: bounds the time on repetitive input
	goodMatch = 32 // a match this long is not worth a lazy look
)

// header is a gzip member header: deflate, no flags, MTIME 0, no extra
// flags, OS "unknown" (255).
var header = []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}

// Compress returns data as a gzip member: one final DEFLATE block with
// fixed codes, then the CRC-32 and length.
func Compress(data []byte) []byte {
	return append(bytes.Clone(header), CompressAfter(nil, data)...)
}

// MaxDict is the longest dictionary CompressAfter uses: DEFLATE's window.
const MaxDict = 1 << 15

// DictPrefix is what precedes CompressAfter(dict, data) in a gzip member:
// the header, then dict as one stored (uncompressed), non-final block. The
// reader thus has dict in its window when data's blocks begin, and a
// sender holding dict as plain bytes (a job with a shared file) writes the
// prefix's first 15 bytes, which depend only on len(dict), then dict.
func DictPrefix(dictLen int) []byte {
	if dictLen < 0 || dictLen > MaxDict {
		panic("detgzip: dictionary longer than the window")
	}
	p := bytes.Clone(header)
	// BFINAL 0, BTYPE 00 (stored), padded to the byte; LEN and its complement.
	return append(p, 0, byte(dictLen), byte(dictLen>>8), ^byte(dictLen), ^byte(dictLen>>8))
}

// CompressAfter returns data as the final DEFLATE block of a gzip member
// whose earlier part decoded to dict (DictPrefix(len(dict)) + dict), with
// back-references into dict, then the trailer: CRC-32 and length of dict
// followed by data. dict longer than MaxDict panics.
func CompressAfter(dict, data []byte) []byte {
	return NewDict(dict).compress(data, false)
}

// Dict is a dictionary indexed once for many CompressAfter calls.
type Dict struct {
	data       []byte
	crc        uint32
	head, prev []int32
	// Scratch space reused by CompressAfter: dictionary + data, and the
	// log of the chain slots it overwrote.
	buf  []byte
	undo []int32
}

// NewDict indexes dict (at most MaxDict bytes).
func NewDict(dict []byte) *Dict {
	if len(dict) > MaxDict {
		panic("detgzip: dictionary longer than the window")
	}
	d := &Dict{data: dict, crc: crc32.ChecksumIEEE(dict)}
	d.head, d.prev = newChains()
	for i := 0; i+minMatch <= len(dict); i++ {
		insertAt(dict, i, d.head, d.prev, nil)
	}
	return d
}

// Clone is a Dict with d's dictionary and index and scratch space of its
// own, for another goroutine.
func (d *Dict) Clone() *Dict {
	return &Dict{data: d.data, crc: d.crc, head: slices.Clone(d.head), prev: slices.Clone(d.prev)}
}

// CompressAfter is the package's CompressAfter with d's dictionary.
func (d *Dict) CompressAfter(data []byte) []byte { return d.compress(data, true) }

// compress is CompressAfter; with reuse false d is used once, so its
// chains are not restored (for a library of 192 KiB the log that restores
// them was 3 MiB).
func (d *Dict) compress(data []byte, reuse bool) []byte {
	w := &bitWriter{out: make([]byte, 0, len(data)/2+64)}
	w.bits(1, 1) // BFINAL
	w.bits(1, 2) // BTYPE 01: fixed Huffman codes
	d.buf = append(append(d.buf[:0], d.data...), data...)
	// The chains are d's, changed in place and restored after: cheaper
	// than copying 256 KiB of them per call. (So a Dict is not safe for
	// concurrent use.)
	if !reuse {
		lz77(d.buf, len(d.data), d.head, d.prev, nil, w)
	} else {
		d.undo = d.undo[:0]
		lz77(d.buf, len(d.data), d.head, d.prev, &d.undo, w)
		for k := len(d.undo) - 4; k >= 0; k -= 4 {
			d.prev[d.undo[k]] = d.undo[k+1]
			d.head[d.undo[k+2]] = d.undo[k+3]
		}
	}
	w.code(fixedLit(256)) // end of block
	w.flush()
	crc := crc32.Update(d.crc, crc32.IEEETable, data)
	w.out = binary.LittleEndian.AppendUint32(w.out, crc)
	w.out = binary.LittleEndian.AppendUint32(w.out, uint32(len(d.data)+len(data)))
	return w.out
}

func newChains() (head, prev []int32) {
	head = make([]int32, 1<<hashBits)
	for i := range head {
		head[i] = -1
	}
	return head, make([]int32, window)
}

// insertAt records position i (with minMatch bytes after it) in the
// chains; with undo, it logs the slots it overwrites.
func insertAt(data []byte, i int, head, prev []int32, undo *[]int32) {
	h := hash3(data, i)
	p := i & (window - 1)
	if undo != nil {
		*undo = append(*undo, int32(p), prev[p], int32(h), head[h])
	}
	prev[p] = head[h]
	head[h] = int32(i)
}

func hash3(b []byte, i int) uint32 {
	v := uint32(b[i])<<16 | uint32(b[i+1])<<8 | uint32(b[i+2])
	return (v * 2654435761) >> (32 - hashBits)
}

// lz77 emits data[start:] as literals and (length, distance) pairs;
// data[:start] is history the reader already has, indexed in head and
// prev (up to its last minMatch-1 bytes, which lz77 indexes).
func lz77(data []byte, start int, head, prev []int32, undo *[]int32, w *bitWriter) {
	n := len(data)
	insert := func(i int) {
		if i+minMatch <= n {
			insertAt(data, i, head, prev, undo)
		}
	}
	// longest is the longest match for position i: length, distance.
	longest := func(i int) (int, int) {
		if i+minMatch > n {
			return 0, 0
		}
		limit := min(maxMatch, n-i)
		bestLen, bestDist := 0, 0
		cand := head[hash3(data, i)]
		for chain := 0; cand >= 0 && chain < maxChain; chain++ {
			j := int(cand)
			if i-j > window-1 || j >= i {
				break
			}
			if data[j+bestLen] == data[i+bestLen] || bestLen == 0 {
				l := 0
				for l < limit && data[j+l] == data[i+l] {
					l++
				}
				if l > bestLen {
					bestLen, bestDist = l, i-j
					if l == limit {
						break
					}
				}
			}
			next := prev[j&(window-1)]
			if next >= cand {
				break // the slot was reused by a newer position
			}
			cand = next
		}
		if bestLen < minMatch {
			return 0, 0
		}
		return bestLen, bestDist
	}

	for i := max(0, start-minMatch+1); i < start; i++ {
		insert(i)
	}
	i := start
	for i < n {
		l, d := longest(i)
		if l < minMatch {
			w.literal(data[i])
			insert(i)
			i++
			continue
		}
		insert(i)
		if l < goodMatch {
			// Lazy: a longer match one byte on wins over this one.
			if l2, d2 := longest(i + 1); l2 > l {
				w.literal(data[i])
				i++
				l, d = l2, d2
				insert(i)
			}
		}
		w.match(l, d)
		for k := 1; k < l; k++ {
			insert(i + k)
		}
		i += l
	}
}

// bitWriter packs DEFLATE's LSB-first bit stream.
type bitWriter struct {
	out   []byte
	acc   uint64
	nbits uint
}

func (w *bitWriter) bits(v uint32, n uint) {
	w.acc |= uint64(v) << w.nbits
	w.nbits += n
	for w.nbits >= 8 {
		w.out = append(w.out, byte(w.acc))
		w.acc >>= 8
		w.nbits -= 8
	}
}

func (w *bitWriter) flush() {
	if w.nbits > 0 {
		w.out = append(w.out, byte(w.acc))
		w.acc, w.nbits = 0, 0
	}
}

// huff is a Huffman code: its bits, most significant first, and length.
type huff struct {
	code uint32
	n    uint
}

// code writes a Huffman code; DEFLATE stores them most significant bit
// first, so the bits are reversed into the LSB-first stream.
func (w *bitWriter) code(h huff) {
	var r uint32
	for k := uint(0); k < h.n; k++ {
		r = r<<1 | (h.code>>k)&1
	}
	w.bits(r, h.n)
}

// fixedLit is the fixed literal/length code of symbol s (RFC 1951 §3.2.6).
func fixedLit(s int) huff {
	switch {
	case s < 144:
		return huff{uint32(0x30 + s), 8}
	case s < 256:
		return huff{uint32(0x190 + s - 144), 9}
	case s < 280:
		return huff{uint32(s - 256), 7}
	default:
		return huff{uint32(0xc0 + s - 280), 8}
	}
}

func (w *bitWriter) literal(b byte) { w.code(fixedLit(int(b))) }

// Length codes 257..285: base length and extra bits (RFC 1951 §3.2.5).
var (
	lenBase  = [29]int{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lenExtra = [29]uint{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	// Distance codes 0..29.
	distBase  = [30]int{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distExtra = [30]uint{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
)

// match writes a back-reference: length 3..258, distance 1..32768.
func (w *bitWriter) match(length, dist int) {
	li := len(lenBase) - 1
	for lenBase[li] > length {
		li--
	}
	w.code(fixedLit(257 + li))
	if lenExtra[li] > 0 {
		w.bits(uint32(length-lenBase[li]), lenExtra[li])
	}
	di := len(distBase) - 1
	for distBase[di] > dist {
		di--
	}
	w.code(huff{uint32(di), 5})
	if distExtra[di] > 0 {
		w.bits(uint32(dist-distBase[di]), distExtra[di])
	}
}
