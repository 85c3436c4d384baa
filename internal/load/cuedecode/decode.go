// Package cuedecode decodes a validated CUE value into a Go value as
// cue.Value.Decode does, without sorting struct fields.
//
// cue.Value.Decode reads a struct through Value.Fields, which sorts the
// struct's fields topologically (CUE's output order) before yielding
// them; a Go struct has no order to keep, so that sort is wasted: on a
// 1,000-workload vet, Decode was a fifth of the CPU and its field sort
// over half of that. Decode here looks each Go field up by its JSON name
// instead and decodes strings, bools, ints and floats itself. A map from
// string to string or to any, and an interface, it reads from the value's
// JSON (one evaluation context for the whole value, where
// cue.Value.Decode makes two for every entry, and on a bundled workload
// those contexts were a sixth of what decoding allocated); CUE writes an
// int without a fraction or exponent and a float with one ("5.0"), so
// the numbers come back as the int64 and float64 cue.Value.Decode gives,
// and a number neither holds goes to cue.Value.Decode. Everything else
// (bytes, types with their own unmarshaler or an embedded struct) goes to
// cue.Value.Decode too, so the result is the same value.
//
// It is meant for values that passed Validate(cue.Concrete(true)) against
// a closed schema whose field names are the Go structs' JSON names
// (schema.TestSchemaMirror keeps wlc's in sync): a Go field without a
// regular field behind it is left as it is, as cue.Value.Decode leaves
// it, and names match exactly (cue.Value.Decode also tries a
// case-insensitive match, which such a value never needs). On a type
// mismatch it stops at the first error, where cue.Value.Decode collects
// them all.
//
// wlcbench at 1,000 workloads, this build against one decoding with
// cue.Value.Decode (5 interleaved repetitions, 2 CPUs, load average
// 1-2, medians): cold vet wall 0.88x and CPU 0.86x; export wall 0.92x,
// CPU 0.94x.
package cuedecode

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/token"
)

// Decode sets the value x points to from v.
func Decode(v cue.Value, x any) error {
	rv := reflect.ValueOf(x)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return v.Decode(x) // cue's own error for an unsettable value
	}
	return decode(rv.Elem(), v)
}

func decode(x reflect.Value, v cue.Value) error {
	v, _ = v.Default()
	t := x.Type()
	if scalar(t) && v.IsConcrete() {
		// As cue.Value.Decode: the kind's accessor, whose error (a
		// mismatched kind) is the decode error.
		switch t.Kind() {
		case reflect.String:
			s, err := v.String()
			if err == nil {
				x.SetString(s)
			}
			return err
		case reflect.Bool:
			b, err := v.Bool()
			if err == nil {
				x.SetBool(b)
			}
			return err
		case reflect.Int, reflect.Int64:
			i, err := v.Int64()
			if err == nil && !x.OverflowInt(i) {
				x.SetInt(i)
				return nil
			}
			if v.Kind() == cue.IntKind {
				// cue.Value.Decode's error for it has an empty message.
				return &rangeError{v}
			}
		case reflect.Float64:
			f, err := v.Float64()
			if err == nil {
				x.SetFloat(f)
				return nil
			}
		}
		return v.Decode(x.Addr().Interface()) // cue's error
	}
	// Kind, not IsNull: IsNull makes an evaluation context for every
	// value but null, and one per struct and list here showed in vet's
	// profile (the kind of a validated value is its concrete kind).
	nullOrOpen := v.Kind() == cue.NullKind || !v.IsConcrete()
	if jsonShaped(t) && !nullOrOpen && decodeJSON(x, v) {
		return nil
	}
	if !plain(t) || nullOrOpen {
		return v.Decode(x.Addr().Interface())
	}
	switch t.Kind() {
	case reflect.Pointer:
		if x.IsNil() {
			x.Set(reflect.New(t.Elem()))
		}
		return decode(x.Elem(), v)
	case reflect.Slice:
		if v.Kind() != cue.ListKind {
			return v.Decode(x.Addr().Interface())
		}
		var elems []cue.Value
		it, err := v.List()
		if err != nil {
			return err
		}
		for it.Next() {
			elems = append(elems, it.Value())
		}
		// cue.Value.Decode makes a new, non-nil slice (an empty list is
		// not nil).
		x.Set(reflect.MakeSlice(t, len(elems), len(elems)))
		for i, e := range elems {
			if err := decode(x.Index(i), e); err != nil {
				return err
			}
		}
		return nil
	case reflect.Struct:
		if v.Kind() != cue.StructKind {
			return v.Decode(x.Addr().Interface())
		}
		for _, f := range fieldsOf(t) {
			fv := v.LookupPath(f.path)
			if !fv.Exists() {
				continue // absent or optional: Fields would not yield it either
			}
			if err := decode(x.Field(f.index), fv); err != nil {
				return err
			}
		}
		return nil
	}
	return v.Decode(x.Addr().Interface())
}

// scalar reports whether t is a string, bool, int or float64 kind without
// an unmarshaler of its own, decoded here as cue.Value.Decode decodes it.
func scalar(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int64, reflect.Float64:
		return !unmarshals(t)
	}
	return false
}

func unmarshals(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	for _, u := range []reflect.Type{cueUnmarshaler, jsonUnmarshaler, textUnmarshaler} {
		if t.Implements(u) || pt.Implements(u) {
			return true
		}
	}
	return false
}

// plain reports whether t is a struct, pointer or slice this package
// walks itself: no unmarshaler of its own (cue.Value.Decode would call
// it) and, for a struct, no embedded field (promoted names are
// encoding/json's rules, left to cue).
func plain(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Struct:
	default:
		return false
	}
	if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
		return false // bytes
	}
	if unmarshals(t) {
		return false
	}
	if t.Kind() == reflect.Struct {
		for i := range t.NumField() {
			if t.Field(i).Anonymous {
				return false
			}
		}
	}
	return true
}

var (
	cueUnmarshaler  = reflect.TypeFor[cue.Unmarshaler]()
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

type field struct {
	path  cue.Path // the JSON name, as cue.Value.Decode matches it
	index int
}

var fieldCache sync.Map // reflect.Type → []field

// fieldsOf lists t's exported fields by JSON name (the tag's name, else
// the Go name; "-" is skipped), as encoding/json and cue read them.
func fieldsOf(t reflect.Type) []field {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.([]field)
	}
	var fs []field
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		name := sf.Name
		if tag, ok := sf.Tag.Lookup("json"); ok {
			n, _, _ := strings.Cut(tag, ",")
			if n == "-" && !strings.Contains(tag, ",") {
				continue
			}
			if n != "" {
				name = n
			}
		}
		fs = append(fs, field{path: cue.MakePath(cue.Str(name)), index: i})
	}
	fieldCache.Store(t, fs)
	return fs
}

var anyType = reflect.TypeFor[any]()

// jsonShaped reports whether decodeJSON reads t: the empty interface, and
// a map from a string kind to a string kind or to any, none with an
// unmarshaler of its own.
func jsonShaped(t reflect.Type) bool {
	switch {
	case t == anyType:
		return true
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String && !unmarshals(t) && !unmarshals(t.Key()):
		e := t.Elem()
		return e == anyType || (e.Kind() == reflect.String && !unmarshals(e))
	}
	return false
}

// decodeJSON sets x (a jsonShaped type) from v's JSON, as
// cue.Value.Decode would: a map is made when x has none and gets every
// entry of v, an interface holds map[string]any, []any (never nil),
// string, bool, int64, float64 or nil. It reports false, having set
// nothing, when v has no JSON or holds something that takes
// cue.Value.Decode's own handling (a number past int64 or float64, a
// non-string entry of a map of strings): the caller decodes v with it.
func decodeJSON(x reflect.Value, v cue.Value) bool {
	b, err := v.MarshalJSON()
	if err != nil {
		return false
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var j any
	if d.Decode(&j) != nil {
		return false
	}
	j, ok := fromJSON(j)
	if !ok {
		return false
	}
	t := x.Type()
	if t == anyType {
		if j == nil {
			x.SetZero()
		} else {
			x.Set(reflect.ValueOf(j))
		}
		return true
	}
	m, ok := j.(map[string]any)
	if !ok {
		return false
	}
	if t.Elem() != anyType {
		for _, e := range m {
			if _, ok := e.(string); !ok {
				return false
			}
		}
	}
	if x.IsNil() {
		x.Set(reflect.MakeMapWithSize(t, len(m)))
	}
	for k, e := range m {
		ev := reflect.Zero(t.Elem())
		if e != nil {
			ev = reflect.ValueOf(e).Convert(t.Elem())
		}
		x.SetMapIndex(reflect.ValueOf(k).Convert(t.Key()), ev)
	}
	return true
}

// fromJSON turns the json.Numbers of j into the int64 or float64
// cue.Value.Decode gives, reporting false for a number it might not:
// one past int64 (and math.MinInt64, which Value.Int64 refuses too), or
// one CUE wrote with an exponent: a very large or small float, which
// Value.Float64 may refuse (Decode then gives a big.Float) where
// strconv.ParseFloat rounds it to zero.
func fromJSON(j any) (any, bool) {
	switch j := j.(type) {
	case json.Number:
		intPart, frac, isFloat := strings.Cut(strings.TrimPrefix(string(j), "-"), ".")
		if !digits(intPart) || (isFloat && !digits(frac)) {
			return nil, false
		}
		if !isFloat {
			i, err := strconv.ParseInt(string(j), 10, 64)
			return i, err == nil && i != math.MinInt64
		}
		f, err := strconv.ParseFloat(string(j), 64)
		if f == 0 {
			f = 0 // Value.Float64 gives +0 for every zero
		}
		return f, err == nil
	case map[string]any:
		return j, fromJSONAll(maps.All(j), func(k string, e any) { j[k] = e })
	case []any:
		if j == nil {
			j = []any{}
		}
		return j, fromJSONAll(slices.All(j), func(i int, e any) { j[i] = e })
	}
	return j, true
}

// fromJSONAll puts fromJSON of every element of a map or list back with
// set, reporting false at the first it refuses.
func fromJSONAll[K comparable](elems iter.Seq2[K, any], set func(K, any)) bool {
	for k, e := range elems {
		e, ok := fromJSON(e)
		if !ok {
			return false
		}
		set(k, e)
	}
	return true
}

// digits reports whether s is a nonempty run of ASCII digits.
func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// rangeError is an integer past int64, at the user's value.
type rangeError struct{ v cue.Value }

func (e *rangeError) Position() token.Pos         { return e.v.Pos() }
func (e *rangeError) InputPositions() []token.Pos { return nil }
func (e *rangeError) Error() string               { f, a := e.Msg(); return fmt.Sprintf(f, a...) }
func (e *rangeError) Path() []string {
	var p []string
	for _, s := range e.v.Path().Selectors() {
		p = append(p, s.String())
	}
	return p
}
func (e *rangeError) Msg() (string, []any) {
	return "%v is past the largest integer wlc holds, %d; use a smaller value", []any{e.v, int64(math.MaxInt64)}
}
