// Package gocodec encodes Go values exactly, for wlc's on-disk cache of
// evaluated workloads: generated artifacts must be byte-identical whether a
// result came from the cache or from a fresh evaluation, so a cached value
// must decode to one deeply identical to the value encoded. encoding/json
// and encoding/gob are both lossy here (json turns int64(1) inside an any
// into float64; gob turns empty non-nil slices and maps into nil; both
// skip fields behind omitempty or at their zero value).
//
// Every exported field is written, whatever its struct tags say; nil and
// empty non-nil slices and maps stay apart, floats keep their bits (-0 and
// ±Inf included; NaN is an error, as CUE has no NaN and NaN != NaN would
// make "exact" untestable), and a dynamic value in an interface keeps its
// type, which must be one of bool, string, int64, int, float64, []any,
// map[string]any, []byte, *big.Int or *big.Float (CUE's decoded values).
// Anything else (unexported fields, chans, funcs, complex numbers,
// non-empty interfaces, maps with non-string keys) is an error naming its
// path, never a panic.
//
// Format: a header ("GOC", a format version byte, then an FNV-64a hash of
// the type's structure, so data written for another shape of type is an
// error rather than a misreading), then the value in field order with no
// names: zigzag varints for ints, uvarints for uints, little-endian IEEE
// bits for floats, 0/1 for bools and pointers' presence, uvarint length
// then bytes for strings, uvarint n+1 (0 for nil) then the elements for
// slices and maps (map entries in key order, so the output is
// deterministic), and a tag byte then the dynamic value for interfaces.
// Decoding accepts only that canonical form, so re-encoding a decoded
// value gives back the same bytes. The fingerprint covers kinds, field
// names and order, and array lengths, not type names or tags: renaming a
// type keeps its data readable. Data is meant for the machine that wrote
// it (a big.Float's encoding depends on the word size).
package gocodec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/fnv"
	"io"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

const (
	magic     = "GOC\x01" // the last byte is the format version
	headerLen = len(magic) + 8
	// maxDepth bounds nesting so that a cycle, or corrupt data, is an
	// error rather than a stack overflow.
	maxDepth = 1000
)

// Tags of an interface's dynamic value.
const (
	tagNil byte = iota
	tagBool
	tagString
	tagInt64
	tagInt
	tagFloat64
	tagList  // []any
	tagMap   // map[string]any
	tagBytes // []byte
	tagBigInt
	tagBigFloat
)

// Marshal encodes v (a pointer to, or a value of, a supported type) exactly.
// Marshal(x) and Marshal(&x) encode alike, so to encode a pointer or an
// interface value as such, pass a pointer to it.
func Marshal(v any) ([]byte, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil, fmt.Errorf("gocodec: Marshal(nil %T)", v)
		}
		rv = rv.Elem()
	}
	if !rv.IsValid() {
		return nil, errors.New("gocodec: Marshal(nil)")
	}
	tc := codecFor(rv.Type())
	if tc.err != nil {
		return nil, tc.err
	}
	e := encoder{buf: make([]byte, 0, tc.size.Load())}
	e.buf = append(e.buf, magic...)
	e.buf = binary.LittleEndian.AppendUint64(e.buf, tc.fingerprint)
	if err := tc.enc(&e, rv); err != nil {
		return nil, at(err, tc.root)
	}
	if n := int64(len(e.buf)); n > tc.size.Load() {
		tc.size.Store(n)
	}
	return e.buf, nil
}

// Unmarshal decodes data into the value ptr points to, which must be of the
// type Marshal was given (or a pointer to it). The value is replaced as a
// whole, and left as it was on error. Decoded strings share one copy of
// data, so keeping any of them keeps all of it.
func Unmarshal(data []byte, ptr any) error {
	rv := reflect.ValueOf(ptr)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("gocodec: Unmarshal needs a non-nil pointer, not %T", ptr)
	}
	t := rv.Type().Elem()
	tc := codecFor(t)
	if tc.err != nil {
		return tc.err
	}
	if len(data) < headerLen || string(data[:len(magic)]) != magic {
		return errors.New("gocodec: not gocodec data, or another format version")
	}
	if binary.LittleEndian.Uint64(data[len(magic):]) != tc.fingerprint {
		return fmt.Errorf("gocodec: data was encoded from another type than %s", t)
	}
	d := decoder{s: string(data[headerLen:])}
	v := reflect.New(t).Elem()
	if err := tc.dec(&d, v); err != nil {
		return at(err, tc.root)
	}
	if d.off != len(d.s) {
		return fmt.Errorf("gocodec: %d bytes after the %s value", len(d.s)-d.off, t)
	}
	rv.Elem().Set(v)
	return nil
}

// pathError is an error at a path in the value (or type), built as the
// error returns through the codecs so that success pays nothing for it.
type pathError struct {
	segs []string // innermost first
	msg  string
}

func (e *pathError) Error() string {
	path := slices.Clone(e.segs)
	slices.Reverse(path)
	if len(path) > 40 { // a cycle's path is maxDepth long: show its ends
		path = slices.Concat(path[:20], []string{"…"}, path[len(path)-20:])
	}
	return "gocodec: " + strings.Join(path, "") + ": " + e.msg
}

func errorf(format string, args ...any) error {
	return &pathError{msg: fmt.Sprintf(format, args...)}
}

// at prepends seg to err's path.
func at(err error, seg string) error {
	if pe, ok := err.(*pathError); ok {
		pe.segs = append(pe.segs, seg)
	}
	return err
}

func index(i int) string  { return "[" + strconv.Itoa(i) + "]" }
func key(k string) string { return "[" + strconv.Quote(k) + "]" }

// A codec encodes and decodes the values of one type.
type codec struct {
	enc func(*encoder, reflect.Value) error
	// dec sets the whole of v, which is addressable, whatever it held.
	dec func(*decoder, reflect.Value) error
	// min is the fewest bytes a value's encoding takes: it bounds the
	// length a slice or map may claim before anything is allocated. It is
	// 0 only for zero-size types, whose one value encodes as nothing.
	min int
}

type typeCodec struct {
	*codec
	fingerprint uint64
	root        string // the type's name, where error paths start
	err         error
	size        atomic.Int64 // the largest encoding yet: the next one's first buffer
}

var codecs sync.Map // reflect.Type → *typeCodec

func codecFor(t reflect.Type) *typeCodec {
	if tc, ok := codecs.Load(t); ok {
		return tc.(*typeCodec)
	}
	c := compiler{codecs: map[reflect.Type]*codec{}, order: map[reflect.Type]int{}, h: fnv.New64a()}
	k, err := c.compile(t)
	tc := &typeCodec{codec: k, fingerprint: c.h.Sum64(), root: t.Name()}
	if tc.root == "" {
		tc.root = t.String()
	}
	if err != nil {
		tc.err = at(err, tc.root)
	}
	actual, _ := codecs.LoadOrStore(t, tc)
	return actual.(*typeCodec)
}

// A compiler builds the codec of a type and, as it goes, hashes the type's
// structure (kinds, field names, lengths; not type names, which the
// encoding does not depend on) into the fingerprint.
type compiler struct {
	codecs map[reflect.Type]*codec
	order  map[reflect.Type]int // a type met again is hashed as its number
	h      hash.Hash64
}

func (c *compiler) write(s string) { io.WriteString(c.h, s) }

func (c *compiler) compile(t reflect.Type) (*codec, error) {
	if k, ok := c.codecs[t]; ok {
		// Possibly still being built (a recursive type): codecs read
		// their elements' fields when they run, not now.
		c.write("@" + strconv.Itoa(c.order[t]))
		return k, nil
	}
	k := &codec{min: 1}
	c.codecs[t] = k
	c.order[t] = len(c.order)
	switch t.Kind() {
	case reflect.Bool:
		c.write("bool")
		k.enc, k.dec = encBool, decBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		c.write(t.Kind().String())
		k.enc, k.dec = encInt, decInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		c.write(t.Kind().String())
		k.enc, k.dec = encUint, decUint
	case reflect.Float32:
		c.write("float32")
		k.enc, k.dec, k.min = encFloat32, decFloat32, 4
	case reflect.Float64:
		c.write("float64")
		k.enc, k.dec, k.min = encFloat64, decFloat64, 8
	case reflect.String:
		c.write("string")
		k.enc, k.dec = encString, decString
	case reflect.Interface:
		if t.NumMethod() > 0 {
			return nil, errorf("unsupported type %s (only the empty interface is)", t)
		}
		c.write("any")
		k.enc, k.dec = encInterface, decInterface
	case reflect.Pointer:
		c.write("*")
		elem, err := c.compile(t.Elem())
		if err != nil {
			return nil, err
		}
		k.enc, k.dec = pointerCodec(t, elem)
	case reflect.Slice:
		c.write("[]")
		elem, err := c.compile(t.Elem())
		if err != nil {
			return nil, at(err, "[]")
		}
		k.enc, k.dec = sliceCodec(t, elem)
	case reflect.Array:
		c.write("[" + strconv.Itoa(t.Len()) + "]")
		elem, err := c.compile(t.Elem())
		if err != nil {
			return nil, at(err, "[]")
		}
		k.enc, k.dec = arrayCodec(t, elem)
		k.min = t.Len() * elem.min
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, errorf("unsupported type %s (map keys must be strings)", t)
		}
		c.write("map[string]")
		elem, err := c.compile(t.Elem())
		if err != nil {
			return nil, at(err, "[]")
		}
		k.enc, k.dec = mapCodec(t, elem)
	case reflect.Struct:
		c.write("struct{")
		k.min = 0
		fields := make([]field, t.NumField())
		for i := range fields {
			f := t.Field(i)
			if !f.IsExported() {
				return nil, at(errorf("unexported field"), "."+f.Name)
			}
			c.write(f.Name + " ")
			fc, err := c.compile(f.Type)
			if err != nil {
				return nil, at(err, "."+f.Name)
			}
			c.write(";")
			fields[i] = field{codec: fc, name: f.Name}
			k.min += fc.min
		}
		c.write("}")
		k.enc, k.dec = structCodec(fields)
	default:
		return nil, errorf("unsupported type %s", t)
	}
	return k, nil
}

type encoder struct {
	buf   []byte
	keys  []string // scratch for sorting map keys, shared by nested maps
	depth int
}

func (e *encoder) uvarint(x uint64) { e.buf = binary.AppendUvarint(e.buf, x) }

func (e *encoder) str(s string) {
	e.uvarint(uint64(len(s)))
	e.buf = append(e.buf, s...)
}

func (e *encoder) flag(b bool) {
	if b {
		e.buf = append(e.buf, 1)
	} else {
		e.buf = append(e.buf, 0)
	}
}

// count writes a slice or map's length, 0 meaning nil.
func (e *encoder) count(n int, isNil bool) {
	if isNil {
		e.buf = append(e.buf, 0)
	} else {
		e.uvarint(uint64(n) + 1)
	}
}

func (e *encoder) float64(f float64) error {
	if f != f {
		return errorf("NaN is not supported")
	}
	e.buf = binary.LittleEndian.AppendUint64(e.buf, math.Float64bits(f))
	return nil
}

func (e *encoder) enter() error {
	if e.depth++; e.depth > maxDepth {
		return errorf("nested more than %d deep (a cycle?)", maxDepth)
	}
	return nil
}

// sortedKeys returns m's keys sorted, in scratch space that the caller
// releases with e.keys = e.keys[:start].
func sortedKeys[V any](e *encoder, m map[string]V) (keys []string, start int) {
	start = len(e.keys)
	for k := range m {
		e.keys = append(e.keys, k)
	}
	keys = e.keys[start:]
	slices.Sort(keys)
	return keys, start
}

// any encodes an interface's dynamic value.
func (e *encoder) any(x any) error {
	switch x := x.(type) {
	case nil:
		e.buf = append(e.buf, tagNil)
	case bool:
		e.buf = append(e.buf, tagBool)
		e.flag(x)
	case string:
		e.buf = append(e.buf, tagString)
		e.str(x)
	case int64:
		e.buf = append(e.buf, tagInt64)
		e.buf = binary.AppendVarint(e.buf, x)
	case int:
		e.buf = append(e.buf, tagInt)
		e.buf = binary.AppendVarint(e.buf, int64(x))
	case float64:
		e.buf = append(e.buf, tagFloat64)
		return e.float64(x)
	case []byte:
		e.buf = append(e.buf, tagBytes)
		e.count(len(x), x == nil)
		e.buf = append(e.buf, x...)
	case []any:
		e.buf = append(e.buf, tagList)
		return e.list(x)
	case map[string]any:
		e.buf = append(e.buf, tagMap)
		return e.anyMap(x)
	case *big.Int:
		e.buf = append(e.buf, tagBigInt)
		switch {
		case x == nil:
			e.buf = append(e.buf, 0)
			return nil
		case x.Sign() >= 0:
			e.buf = append(e.buf, 1)
		default:
			e.buf = append(e.buf, 2)
		}
		e.str(string(x.Bytes()))
	case *big.Float:
		e.buf = append(e.buf, tagBigFloat)
		e.flag(x != nil)
		if x != nil {
			// GobEncode keeps precision, mode and accuracy, which
			// the text forms drop.
			b, err := x.GobEncode()
			if err != nil {
				return errorf("%v", err)
			}
			e.str(string(b))
		}
	default:
		return errorf("unsupported dynamic type %T", x)
	}
	return nil
}

func (e *encoder) list(s []any) error {
	e.count(len(s), s == nil)
	if err := e.enter(); err != nil {
		return err
	}
	for i, x := range s {
		if err := e.any(x); err != nil {
			return at(err, index(i))
		}
	}
	e.depth--
	return nil
}

func (e *encoder) anyMap(m map[string]any) error {
	e.count(len(m), m == nil)
	if err := e.enter(); err != nil {
		return err
	}
	keys, start := sortedKeys(e, m)
	for _, k := range keys {
		e.str(k)
		if err := e.any(m[k]); err != nil {
			return at(err, key(k))
		}
	}
	e.keys = e.keys[:start]
	e.depth--
	return nil
}

type decoder struct {
	s     string // the data: decoded strings are substrings of it, not copies
	off   int
	depth int
}

func truncated() error { return errorf("truncated data") }

func (d *decoder) byte() (byte, error) {
	if d.off >= len(d.s) {
		return 0, truncated()
	}
	d.off++
	return d.s[d.off-1], nil
}

func (d *decoder) flag() (bool, error) {
	b, err := d.byte()
	if err == nil && b > 1 {
		err = errorf("invalid byte %d, want 0 or 1", b)
	}
	return b == 1, err
}

func (d *decoder) uvarint() (uint64, error) {
	var x uint64
	for i := 0; ; i++ {
		b, err := d.byte()
		if err != nil {
			return 0, err
		}
		if i == binary.MaxVarintLen64-1 && b > 1 {
			return 0, errorf("varint overflows 64 bits")
		}
		if b < 0x80 {
			if b == 0 && i > 0 {
				return 0, errorf("non-minimal varint")
			}
			return x | uint64(b)<<(7*i), nil
		}
		x |= uint64(b&0x7f) << (7 * i)
	}
}

func (d *decoder) varint() (int64, error) {
	u, err := d.uvarint()
	x := int64(u >> 1)
	if u&1 != 0 {
		x = ^x
	}
	return x, err
}

func (d *decoder) str() (string, error) {
	n, err := d.uvarint()
	if err != nil {
		return "", err
	}
	if n > uint64(len(d.s)-d.off) {
		return "", truncated()
	}
	d.off += int(n)
	return d.s[d.off-int(n) : d.off], nil
}

// count reads a slice or map's length, of elements taking at least min
// bytes each, so that a corrupt length fails before it allocates.
func (d *decoder) count(min int) (n int, isNil bool, err error) {
	u, err := d.uvarint()
	if err != nil || u == 0 {
		return 0, true, err
	}
	u--
	if u > math.MaxInt || min > 0 && u > uint64((len(d.s)-d.off)/min) {
		return 0, false, errorf("length %d exceeds the data", u)
	}
	return int(u), false, nil
}

// bits reads an n-byte little-endian word.
func (d *decoder) bits(n int) (uint64, error) {
	if n > len(d.s)-d.off {
		return 0, truncated()
	}
	var x uint64
	for i := n - 1; i >= 0; i-- {
		x = x<<8 | uint64(d.s[d.off+i])
	}
	d.off += n
	return x, nil
}

func (d *decoder) float64() (float64, error) {
	b, err := d.bits(8)
	f := math.Float64frombits(b)
	if err == nil && f != f {
		err = errorf("NaN is not supported")
	}
	return f, err
}

func (d *decoder) enter() error {
	if d.depth++; d.depth > maxDepth {
		return errorf("nested more than %d deep", maxDepth)
	}
	return nil
}

// dynamic is x as an interface's dynamic value, or err (a nil interface
// then, not a typed zero).
func dynamic[T any](x T, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return x, nil
}

// any decodes an interface's dynamic value.
func (d *decoder) any() (any, error) {
	tag, err := d.byte()
	if err != nil {
		return nil, err
	}
	switch tag {
	case tagNil:
		return nil, nil
	case tagBool:
		return dynamic(d.flag())
	case tagString:
		return dynamic(d.str())
	case tagInt64:
		return dynamic(d.varint())
	case tagInt:
		x, err := d.varint()
		if err != nil {
			return nil, err
		}
		if int64(int(x)) != x {
			return nil, errorf("%d overflows int", x)
		}
		return int(x), nil
	case tagFloat64:
		return dynamic(d.float64())
	case tagBytes:
		n, isNil, err := d.count(1)
		if err != nil {
			return nil, err
		}
		if isNil {
			return []byte(nil), nil
		}
		d.off += n
		return []byte(d.s[d.off-n : d.off]), nil
	case tagList:
		return dynamic(d.list())
	case tagMap:
		return dynamic(d.anyMap())
	case tagBigInt:
		sign, err := d.byte()
		if err != nil {
			return nil, err
		}
		if sign == 0 {
			return (*big.Int)(nil), nil
		}
		b, err := d.str()
		switch {
		case err != nil:
			return nil, err
		case sign > 2:
			return nil, errorf("invalid big.Int sign %d", sign)
		case len(b) > 0 && b[0] == 0 || sign == 2 && len(b) == 0:
			return nil, errorf("non-canonical big.Int")
		}
		x := new(big.Int).SetBytes([]byte(b))
		if sign == 2 {
			x.Neg(x)
		}
		return x, nil
	case tagBigFloat:
		present, err := d.flag()
		if err != nil {
			return nil, err
		}
		if !present {
			return (*big.Float)(nil), nil
		}
		b, err := d.str()
		if err != nil {
			return nil, err
		}
		x := new(big.Float)
		if err := x.GobDecode([]byte(b)); err != nil {
			return nil, errorf("%v", err)
		}
		// GobDecode accepts forms (an empty buffer, surplus mantissa
		// bytes) that GobEncode never writes.
		if again, _ := x.GobEncode(); !bytes.Equal(again, []byte(b)) {
			return nil, errorf("non-canonical big.Float")
		}
		return x, nil
	}
	return nil, errorf("invalid interface tag %d", tag)
}

func (d *decoder) list() ([]any, error) {
	n, isNil, err := d.count(1)
	if err != nil || isNil {
		return nil, err
	}
	if err := d.enter(); err != nil {
		return nil, err
	}
	s := make([]any, n)
	for i := range s {
		if s[i], err = d.any(); err != nil {
			return nil, at(err, index(i))
		}
	}
	d.depth--
	return s, nil
}

func (d *decoder) anyMap() (map[string]any, error) {
	n, isNil, err := d.count(2)
	if err != nil || isNil {
		return nil, err
	}
	if err := d.enter(); err != nil {
		return nil, err
	}
	m := make(map[string]any, n)
	prev := ""
	for i := range n {
		k, err := d.str()
		if err != nil {
			return nil, err
		}
		if i > 0 && k <= prev {
			return nil, errorf("map keys out of order")
		}
		if m[k], err = d.any(); err != nil {
			return nil, at(err, key(k))
		}
		prev = k
	}
	d.depth--
	return m, nil
}

func encBool(e *encoder, v reflect.Value) error {
	e.flag(v.Bool())
	return nil
}

func decBool(d *decoder, v reflect.Value) error {
	b, err := d.flag()
	v.SetBool(b)
	return err
}

func encInt(e *encoder, v reflect.Value) error {
	e.buf = binary.AppendVarint(e.buf, v.Int())
	return nil
}

func decInt(d *decoder, v reflect.Value) error {
	x, err := d.varint()
	if err == nil && v.OverflowInt(x) {
		return errorf("%d overflows %s", x, v.Type())
	}
	v.SetInt(x)
	return err
}

func encUint(e *encoder, v reflect.Value) error {
	e.uvarint(v.Uint())
	return nil
}

func decUint(d *decoder, v reflect.Value) error {
	x, err := d.uvarint()
	if err == nil && v.OverflowUint(x) {
		return errorf("%d overflows %s", x, v.Type())
	}
	v.SetUint(x)
	return err
}

func encFloat32(e *encoder, v reflect.Value) error {
	f := v.Float()
	if f != f {
		return errorf("NaN is not supported")
	}
	e.buf = binary.LittleEndian.AppendUint32(e.buf, math.Float32bits(float32(f)))
	return nil
}

func decFloat32(d *decoder, v reflect.Value) error {
	b, err := d.bits(4)
	f := math.Float32frombits(uint32(b))
	if err == nil && f != f {
		return errorf("NaN is not supported")
	}
	v.SetFloat(float64(f))
	return err
}

func encFloat64(e *encoder, v reflect.Value) error { return e.float64(v.Float()) }

func decFloat64(d *decoder, v reflect.Value) error {
	f, err := d.float64()
	v.SetFloat(f)
	return err
}

func encString(e *encoder, v reflect.Value) error {
	e.str(v.String())
	return nil
}

func decString(d *decoder, v reflect.Value) error {
	s, err := d.str()
	v.SetString(s)
	return err
}

func encInterface(e *encoder, v reflect.Value) error { return e.any(v.Interface()) }

func decInterface(d *decoder, v reflect.Value) error {
	x, err := d.any()
	if err != nil {
		return err
	}
	// Through a *any: v.Set would copy x's dynamic value once more.
	if p, ok := v.Addr().Interface().(*any); ok {
		*p = x
	} else if x == nil {
		v.SetZero()
	} else {
		v.Set(reflect.ValueOf(x))
	}
	return nil
}

func pointerCodec(t reflect.Type, elem *codec) (enc func(*encoder, reflect.Value) error, dec func(*decoder, reflect.Value) error) {
	enc = func(e *encoder, v reflect.Value) error {
		e.flag(!v.IsNil())
		if v.IsNil() {
			return nil
		}
		if err := e.enter(); err != nil {
			return err
		}
		if err := elem.enc(e, v.Elem()); err != nil {
			return err
		}
		e.depth--
		return nil
	}
	dec = func(d *decoder, v reflect.Value) error {
		present, err := d.flag()
		if err != nil || !present {
			v.SetZero()
			return err
		}
		if err := d.enter(); err != nil {
			return err
		}
		p := reflect.New(t.Elem())
		if err := elem.dec(d, p.Elem()); err != nil {
			return err
		}
		d.depth--
		v.Set(p)
		return nil
	}
	return enc, dec
}

func sliceCodec(t reflect.Type, elem *codec) (enc func(*encoder, reflect.Value) error, dec func(*decoder, reflect.Value) error) {
	if t.Elem().Kind() == reflect.Uint8 {
		// Raw bytes rather than a varint each.
		enc = func(e *encoder, v reflect.Value) error {
			e.count(v.Len(), v.IsNil())
			e.buf = append(e.buf, v.Bytes()...)
			return nil
		}
		dec = func(d *decoder, v reflect.Value) error {
			n, isNil, err := d.count(1)
			if err != nil || isNil {
				v.SetZero()
				return err
			}
			d.off += n
			v.SetBytes([]byte(d.s[d.off-n : d.off]))
			return nil
		}
		return enc, dec
	}
	// A zero-size type has one value, which encodes as nothing: skipping
	// the elements keeps a huge claimed length from costing time.
	zero := t.Elem().Size() == 0
	enc = func(e *encoder, v reflect.Value) error {
		n := v.Len()
		e.count(n, v.IsNil())
		if zero {
			return nil
		}
		if err := e.enter(); err != nil {
			return err
		}
		for i := range n {
			if err := elem.enc(e, v.Index(i)); err != nil {
				return at(err, index(i))
			}
		}
		e.depth--
		return nil
	}
	dec = func(d *decoder, v reflect.Value) error {
		n, isNil, err := d.count(elem.min)
		if err != nil || isNil {
			v.SetZero()
			return err
		}
		s := reflect.MakeSlice(t, n, n)
		if !zero {
			if err := d.enter(); err != nil {
				return err
			}
			for i := range n {
				if err := elem.dec(d, s.Index(i)); err != nil {
					return at(err, index(i))
				}
			}
			d.depth--
		}
		v.Set(s)
		return nil
	}
	return enc, dec
}

func arrayCodec(t reflect.Type, elem *codec) (enc func(*encoder, reflect.Value) error, dec func(*decoder, reflect.Value) error) {
	n := t.Len()
	if t.Elem().Size() == 0 {
		n = 0 // see sliceCodec
	}
	enc = func(e *encoder, v reflect.Value) error {
		for i := range n {
			if err := elem.enc(e, v.Index(i)); err != nil {
				return at(err, index(i))
			}
		}
		return nil
	}
	dec = func(d *decoder, v reflect.Value) error {
		for i := range n {
			if err := elem.dec(d, v.Index(i)); err != nil {
				return at(err, index(i))
			}
		}
		return nil
	}
	return enc, dec
}

var (
	mapStringAny    = reflect.TypeFor[map[string]any]()
	mapStringString = reflect.TypeFor[map[string]string]()
)

func mapCodec(t reflect.Type, elem *codec) (enc func(*encoder, reflect.Value) error, dec func(*decoder, reflect.Value) error) {
	switch t {
	case mapStringAny:
		enc = func(e *encoder, v reflect.Value) error {
			return e.anyMap(v.Interface().(map[string]any))
		}
		dec = func(d *decoder, v reflect.Value) error {
			m, err := d.anyMap()
			if err == nil {
				v.Set(reflect.ValueOf(m))
			}
			return err
		}
		return enc, dec
	case mapStringString:
		// The common case, without reflect's per-entry copies.
		enc = func(e *encoder, v reflect.Value) error {
			m := v.Interface().(map[string]string)
			e.count(len(m), m == nil)
			keys, start := sortedKeys(e, m)
			for _, k := range keys {
				e.str(k)
				e.str(m[k])
			}
			e.keys = e.keys[:start]
			return nil
		}
		dec = func(d *decoder, v reflect.Value) error {
			n, isNil, err := d.count(2)
			if err != nil || isNil {
				v.SetZero()
				return err
			}
			m := make(map[string]string, n)
			prev := ""
			for i := range n {
				k, err := d.str()
				if err != nil {
					return err
				}
				if i > 0 && k <= prev {
					return errorf("map keys out of order")
				}
				if m[k], err = d.str(); err != nil {
					return at(err, key(k))
				}
				prev = k
			}
			v.Set(reflect.ValueOf(m))
			return nil
		}
		return enc, dec
	}
	enc = func(e *encoder, v reflect.Value) error {
		e.count(v.Len(), v.IsNil())
		if err := e.enter(); err != nil {
			return err
		}
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		for _, k := range keys {
			e.str(k.String())
			if err := elem.enc(e, v.MapIndex(k)); err != nil {
				return at(err, key(k.String()))
			}
		}
		e.depth--
		return nil
	}
	dec = func(d *decoder, v reflect.Value) error {
		n, isNil, err := d.count(1 + elem.min)
		if err != nil || isNil {
			v.SetZero()
			return err
		}
		if err := d.enter(); err != nil {
			return err
		}
		m := reflect.MakeMapWithSize(t, n)
		// One key and one element, reused: dec overwrites, SetMapIndex copies.
		kv, ev := reflect.New(t.Key()).Elem(), reflect.New(t.Elem()).Elem()
		prev := ""
		for i := range n {
			k, err := d.str()
			if err != nil {
				return err
			}
			if i > 0 && k <= prev {
				return errorf("map keys out of order")
			}
			if err := elem.dec(d, ev); err != nil {
				return at(err, key(k))
			}
			kv.SetString(k)
			m.SetMapIndex(kv, ev)
			prev = k
		}
		d.depth--
		v.Set(m)
		return nil
	}
	return enc, dec
}

type field struct {
	*codec
	name string
}

func structCodec(fields []field) (enc func(*encoder, reflect.Value) error, dec func(*decoder, reflect.Value) error) {
	enc = func(e *encoder, v reflect.Value) error {
		for i, f := range fields {
			if err := f.enc(e, v.Field(i)); err != nil {
				return at(err, "."+f.name)
			}
		}
		return nil
	}
	dec = func(d *decoder, v reflect.Value) error {
		for i, f := range fields {
			if err := f.dec(d, v.Field(i)); err != nil {
				return at(err, "."+f.name)
			}
		}
		return nil
	}
	return enc, dec
}
