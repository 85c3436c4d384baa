package recipes

import (
	"strconv"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/token"
)

// node is a value of one YAML file with the file's display name, so that
// every lookup can report its own position.
type node struct {
	v    cue.Value
	file string
}

// get follows a path of field names (or list indexes, as decimal strings).
func (n node) get(path ...string) node {
	v := n.v
	for _, p := range path {
		if !v.Exists() {
			break
		}
		if v.Kind() == cue.ListKind {
			i, err := strconv.Atoi(p)
			if err != nil {
				return node{file: n.file}
			}
			v = v.LookupPath(cue.MakePath(cue.Index(i)))
			continue
		}
		v = v.LookupPath(cue.MakePath(cue.Str(p)))
	}
	return node{v: v, file: n.file}
}

func (n node) exists() bool { return n.v.Exists() }

func (n node) isStruct() bool { return n.v.Exists() && n.v.Kind() == cue.StructKind }

func (n node) isList() bool { return n.v.Exists() && n.v.Kind() == cue.ListKind }

func (n node) str() string {
	s, _ := n.v.String()
	return s
}

func (n node) integer() (int, bool) {
	if !n.v.Exists() || n.v.Kind() != cue.IntKind {
		return 0, false
	}
	i, err := n.v.Int64()
	return int(i), err == nil
}

func (n node) boolean() (bool, bool) {
	if !n.v.Exists() || n.v.Kind() != cue.BoolKind {
		return false, false
	}
	b, err := n.v.Bool()
	return b, err == nil
}

// scalar renders a string, number or bool value as its text.
func (n node) scalar() string {
	switch n.v.Kind() {
	case cue.StringKind:
		return n.str()
	case cue.IntKind, cue.FloatKind, cue.NumberKind:
		b, _ := n.v.MarshalJSON()
		return string(b)
	case cue.BoolKind:
		b, _ := n.v.Bool()
		return strconv.FormatBool(b)
	}
	return ""
}

type field struct {
	name string
	n    node
}

// fields lists a struct's regular fields in source order.
func (n node) fields() []field {
	if !n.isStruct() {
		return nil
	}
	it, err := n.v.Fields()
	if err != nil {
		return nil
	}
	var out []field
	for it.Next() {
		out = append(out, field{name: it.Selector().Unquoted(), n: node{v: it.Value(), file: n.file}})
	}
	return out
}

// list returns a list's elements.
func (n node) list() []node {
	if !n.isList() {
		return nil
	}
	it, err := n.v.List()
	if err != nil {
		return nil
	}
	var out []node
	for it.Next() {
		out = append(out, node{v: it.Value(), file: n.file})
	}
	return out
}

// strs returns a list of strings (or a single string as one element).
func (n node) strs() []string {
	if n.v.Exists() && n.v.Kind() == cue.StringKind {
		return []string{n.str()}
	}
	var out []string
	for _, e := range n.list() {
		out = append(out, e.scalar())
	}
	return out
}

func (n node) pos() Pos {
	p := n.v.Pos()
	if !p.IsValid() {
		return Pos{File: n.file}
	}
	return Pos{File: n.file, Line: p.Line(), Column: p.Column()}
}

// Pos is a position in a recipe file.
type Pos struct {
	File         string
	Line, Column int
}

func (p Pos) String() string {
	if p.Line == 0 {
		return p.File
	}
	return p.File + ":" + strconv.Itoa(p.Line) + ":" + strconv.Itoa(p.Column)
}

func posOf(file string, p token.Pos) Pos {
	if !p.IsValid() {
		return Pos{File: file}
	}
	return Pos{File: file, Line: p.Line(), Column: p.Column()}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
