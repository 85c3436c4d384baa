package load

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/token"
)

// A workload written as a definition's instance (#Base: {...};
// workloads: w: #Base & {serve: ...}) is closed by that definition: CUE
// allows only the fields #Base declares, so every schema field written
// beside it is "not allowed", as is each field the schema fills in below
// them: a dozen errors on fields that are fine, some never written. The
// user meant a template; a hidden helper (_Base) is one that stays open.

// closedBy describes a block the user built from a definition of theirs.
type closedBy struct {
	path    []string  // the block (workloads.w, or a block inside it)
	ref     token.Pos // the reference to the definition
	def     string    // its name (#Base)
	refused []string  // the fields written beside it that it does not declare
}

// closedByDefinition finds, for a schema field CUE refused at path, the
// block above it the user built from one of their definitions that does
// not declare the rest of path (serve, or serve's max_model_len where the
// definition declares serve: {...} without it: a definition closes what
// it declares too). Only a definition written as struct literals down
// that path says what it declares; one that embeds anything else
// (schema.#Workload) is left to CUE's message.
func (l *loader) closedByDefinition(path []string) (closedBy, bool) {
	if len(path) < 3 || (path[0] != "workloads" && path[0] != "profiles") {
		return closedBy{}, false
	}
	defs := l.userDefinitions()
	if len(defs) == 0 {
		return closedBy{}, false
	}
	for n := len(path) - 1; n >= 2; n-- {
		sels := make([]cue.Selector, n)
		for i, el := range path[:n] {
			sels[i] = cue.Str(el)
		}
		for _, v := range l.valuesAt(sels) {
			for _, ref := range definitionRefs(v) {
				def, ok := defs[ref.Name]
				if !ok || !lacks(def, path[n:]) {
					continue
				}
				declared, _ := literalLabels(def)
				var beside []string
				eachFieldIn(v, func(name string, _ *ast.Field) bool {
					if !slices.Contains(declared, name) && !slices.Contains(beside, name) {
						beside = append(beside, name)
					}
					return true
				})
				return closedBy{path: path[:n], ref: ref.Pos(), def: ref.Name, refused: beside}, true
			}
		}
	}
	return closedBy{}, false
}

// lacks reports whether the definition def, written as struct literals
// (and lists) down path, does not declare the whole of path; false where
// something else stands on the way (a reference, an embedding), which may
// declare anything.
func lacks(def ast.Expr, path []string) bool {
	values := []ast.Expr{def}
	for _, name := range path {
		var next []ast.Expr
		if i, err := strconv.Atoi(name); err == nil {
			// A list's element: the list is written out in the definition.
			for _, v := range values {
				l, ok := v.(*ast.ListLit)
				if !ok || i >= len(l.Elts) || slices.ContainsFunc(l.Elts, func(e ast.Expr) bool {
					_, ell := e.(*ast.Ellipsis)
					_, comp := e.(*ast.Comprehension)
					return ell || comp
				}) {
					return false
				}
				next = append(next, l.Elts[i])
			}
			values = next
			continue
		}
		for _, v := range values {
			labels, ok := literalLabels(v)
			if !ok {
				return false // it may declare anything
			}
			if !slices.Contains(labels, name) {
				continue
			}
			eachFieldIn(v, func(label string, f *ast.Field) bool {
				if label == name {
					next = append(next, f.Value)
				}
				return true
			})
		}
		if len(next) == 0 {
			return true
		}
		values = next
	}
	return false
}

// message is the one finding for every field the definition refuses.
func (c closedBy) message() string {
	fields := ""
	switch len(c.refused) {
	case 0:
		fields = ", down to the fields the schema adds below them, which it refuses"
	case 1:
		fields = ", so " + c.refused[0] + " is not allowed beside it"
	default:
		fields = ", so " + strings.Join(c.refused[:len(c.refused)-1], ", ") + " and " + c.refused[len(c.refused)-1] + " are not allowed beside it"
	}
	helper := "_" + strings.TrimPrefix(c.def, "#")
	return fmt.Sprintf("built from %s, a definition: CUE closes a definition to the fields it declares%s; make it a hidden helper (%s: {...}), which stays open, and build from that (%s & {...})",
		c.def, fields, helper, helper)
}

// userDefinitions are the definitions the package's own files declare at
// their top level (not the schema's, not wlc.cue's), by name (one
// declared in several places is their &).
func (l *loader) userDefinitions() map[string]ast.Expr {
	out := map[string]ast.Expr{}
	for _, f := range l.files {
		if l.isSchema(f.Filename) || isTyping(f.Filename) {
			continue
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.Field)
			if !ok {
				continue
			}
			name, _, err := ast.LabelName(fd.Label)
			if err != nil || !strings.HasPrefix(name, "#") {
				continue
			}
			if prev, ok := out[name]; ok {
				out[name] = &ast.BinaryExpr{X: prev, Op: token.AND, Y: fd.Value}
			} else {
				out[name] = fd.Value
			}
		}
	}
	return out
}

// literalLabels are the field names of e when each of its operands
// (andOperands) is a struct literal holding only regular fields.
func literalLabels(e ast.Expr) ([]string, bool) {
	var labels []string
	for _, c := range andOperands(e) {
		s, ok := c.(*ast.StructLit)
		if !ok {
			return nil, false // a reference, a list, a disjunction: it may declare anything
		}
		for _, d := range s.Elts {
			switch f := d.(type) {
			case *ast.Field:
				name, _, err := ast.LabelName(f.Label)
				if err != nil {
					return nil, false // a pattern or dynamic field: it may allow more
				}
				labels = append(labels, name)
			case *ast.CommentGroup:
			default:
				return nil, false // an embedding, ..., a let: not only its own fields
			}
		}
	}
	return labels, true
}

// valuesAt are the values the user's files write at path (a field can be
// written in several places).
func (l *loader) valuesAt(path []cue.Selector) []ast.Expr {
	var out []ast.Expr
	for _, f := range l.files {
		if !l.isSchema(f.Filename) && !isTyping(f.Filename) {
			fieldsWritten(f.Decls, path, func(f *ast.Field) bool {
				out = append(out, f.Value)
				return true
			})
		}
	}
	return out
}

// definitionRefs are the references to definitions among e's operands
// (andOperands) and the embeddings of its struct literals ({#Base, ...}).
func definitionRefs(e ast.Expr) []*ast.Ident {
	var out []*ast.Ident
	for _, c := range andOperands(e) {
		switch x := c.(type) {
		case *ast.Ident:
			if strings.HasPrefix(x.Name, "#") {
				out = append(out, x)
			}
		case *ast.StructLit:
			for _, d := range x.Elts {
				if em, ok := d.(*ast.EmbedDecl); ok {
					out = append(out, definitionRefs(em.Expr)...)
				}
			}
		}
	}
	return out
}
