package schema_test

import (
	"io/fs"
	"strings"
	"testing"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"

	"github.com/wlcdev/wlc/schema"
)

// TestRulesInsideCheck keeps every rule that only reports (adds to _check)
// inside `_check: {...}`. A comprehension written among a definition's
// fields costs CUE's closedness check a walk over those fields in every
// value of the definition, fired or not: ~33,000 instructions a workload
// for each top-level rule of #Workload, ~4,000 inside _check (see
// #Workload's _check). CUE's counters (TestEvaluationCost) do not see it.
func TestRulesInsideCheck(t *testing.T) {
	err := fs.WalkDir(schema.Files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".cue") {
			return err
		}
		src, err := schema.Files.ReadFile(p)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(p, src)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			return nil
		}
		for _, decl := range f.Decls {
			field, ok := decl.(*ast.Field)
			if !ok {
				continue
			}
			name, _, _ := ast.LabelName(field.Label)
			if !strings.HasPrefix(name, "#") {
				continue
			}
			st := structOf(field.Value)
			if st == nil {
				continue
			}
			for _, elt := range st.Elts {
				c, ok := elt.(*ast.Comprehension)
				if !ok {
					continue
				}
				if labels := declared(c.Value); len(labels) > 0 && allCheck(labels) {
					t.Errorf("%s: %s: a rule at %s's top level only adds to _check; write it inside `_check: {...}` (without its `_check: ` prefix), where CUE does not walk %s's fields for it in every value", c.Pos(), name, name, name)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// structOf is the struct a definition's value is: the literal itself or,
// for an alias (W={...}), the aliased one.
func structOf(e ast.Expr) *ast.StructLit {
	switch x := e.(type) {
	case *ast.StructLit:
		return x
	case *ast.Alias:
		return structOf(x.Expr)
	}
	return nil
}

// declared lists the labels of the fields a comprehension's body declares,
// through nested comprehensions; a let is not a field.
func declared(e ast.Expr) []string {
	st, ok := e.(*ast.StructLit)
	if !ok {
		return []string{"?"} // not a struct: not a rule
	}
	var out []string
	for _, elt := range st.Elts {
		switch x := elt.(type) {
		case *ast.Field:
			name, _, _ := ast.LabelName(x.Label)
			if name == "" {
				name = "?" // a parenthesized or interpolated label
			}
			out = append(out, name)
		case *ast.Comprehension:
			out = append(out, declared(x.Value)...)
		case *ast.LetClause, *ast.CommentGroup:
		default:
			out = append(out, "?") // an embedding
		}
	}
	return out
}

func allCheck(labels []string) bool {
	for _, l := range labels {
		if l != "_check" {
			return false
		}
	}
	return true
}

// TestTypesShared keeps every field of a definition a workload evaluates
// whose type is a disjunction (a default, an error() message) one
// reference to its type in the definition's *Types (see #WorkloadTypes):
// written in place, CUE evaluates the disjunction again in every
// workload, set or not (~36,000 instructions a field a workload, ~12,000
// referenced). Required fields are always set, so never shared, and are
// left in place; the profiles' and catalogs' definitions are evaluated
// once a load, not per workload, and are not checked.
func TestTypesShared(t *testing.T) {
	for _, p := range []string{"workload.cue", "shapes.cue", "disagg.cue"} {
		src, err := schema.Files.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(p, src)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, decl := range f.Decls {
			def, ok := decl.(*ast.Field)
			if !ok {
				continue
			}
			name, _, _ := ast.LabelName(def.Label)
			st := structOf(def.Value)
			if !strings.HasPrefix(name, "#") || strings.HasSuffix(name, "Types") || st == nil {
				continue
			}
			for _, elt := range st.Elts {
				field, ok := elt.(*ast.Field)
				if !ok || field.Constraint == token.NOT {
					continue
				}
				label, _, err := ast.LabelName(field.Label)
				if err != nil {
					continue // a pattern: it applies only to fields that are set
				}
				if b, ok := field.Value.(*ast.BinaryExpr); ok && b.Op == token.OR {
					t.Errorf("%s: %s.%s: a disjunction written in place is evaluated again in every workload; move it into %sTypes and write %s: %sTypes.%s", field.Pos(), name, label, name, label, name, label)
				}
			}
		}
	}
}
