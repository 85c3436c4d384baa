package load

import (
	"fmt"
	"path/filepath"
	"slices"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"

	"github.com/wlcdev/wlc/internal/diag"
)

// helperScopeHint explains a reference to a field of a helper the struct
// holding the reference is unified with (`_base & {model: "\(precision)"}`,
// precision a field of _base): CUE resolves a name among the fields
// written around it and the package's top level, never among those a
// unification brings, so the field "exists" and is still not found. The
// way out is a reference that reaches the unified value: an alias of the
// field. It returns "" for any other unresolved reference.
func helperScopeHint(d diag.Diagnostic, name string, src *sources) string {
	f := src.syntax(d.File)
	if f == nil {
		return ""
	}
	stack := pathTo(f, name, d.Line, d.Column)
	for i := len(stack) - 1; i > 0; i-- {
		// The values brought in beside what holds the reference: the
		// other operands of an &, or a struct's embeddings.
		var others []ast.Expr
		how := "which this struct is unified with"
		switch x := stack[i].(type) {
		case *ast.BinaryExpr:
			if x.Op == token.AND {
				others = andOperands(x)
			}
		case *ast.StructLit:
			how = "which this struct embeds"
			for _, e := range x.Elts {
				if em, ok := e.(*ast.EmbedDecl); ok {
					others = append(others, andOperands(em.Expr)...)
				}
			}
		}
		for _, op := range others {
			helper, ok := op.(*ast.Ident)
			if !ok || slices.Contains(stack, ast.Node(op)) || !src.declares(d, helper.Name, name) {
				continue
			}
			// The field whose value this is: its alias names the
			// unified value.
			label := "x"
			for j := i; j >= 0; j-- {
				if fd, ok := stack[j].(*ast.Field); ok {
					if l, _, err := ast.LabelName(fd.Label); err == nil {
						label = l
					}
					break
				}
			}
			return fmt.Sprintf("%s: %s is a field of %s, %s, but a name resolves only among the fields written around it (and the package's top level); alias the field, `W=%s: ...`, and write W.%s", d.Message, name, helper.Name, how, label, name)
		}
	}
	return ""
}

// pathTo is the chain of nodes from f down to the identifier name at
// line:col, or nil.
func pathTo(f *ast.File, name string, line, col int) []ast.Node {
	var stack, found []ast.Node
	ast.Walk(f, func(n ast.Node) bool {
		if found != nil {
			return false
		}
		stack = append(stack, n)
		if id, ok := n.(*ast.Ident); ok && id.Name == name && id.Pos().Line() == line && id.Pos().Column() == col {
			found = slices.Clone(stack)
		}
		return true
	}, func(ast.Node) { stack = stack[:len(stack)-1] })
	return found
}

// syntax is the parsed tree of the named file, or nil.
func (s *sources) syntax(name string) *ast.File {
	f := s.file(name)
	if f == nil {
		return nil
	}
	if !f.parsed {
		f.parsed = true
		f.tree, _ = parser.ParseFile(name, f.data)
	}
	return f.tree
}

// declares reports whether a file of d's package declares helper at its
// top level as a struct with a field label among its own.
func (s *sources) declares(d diag.Diagnostic, helper, label string) bool {
	dir := filepath.Dir(d.File)
	names, _ := filepath.Glob(filepath.Join(s.abs(dir), "*.cue"))
	for _, n := range names {
		f := s.syntax(filepath.Join(dir, filepath.Base(n)))
		if f == nil {
			continue
		}
		declared := !eachField(f.Decls, func(name string, fd *ast.Field) bool {
			return name != helper || eachFieldIn(fd.Value, func(l string, _ *ast.Field) bool { return l != label })
		})
		if declared {
			return true
		}
	}
	return false
}

// abs is path p (as findings name files: relative to the working
// directory, or absolute) made absolute.
func (s *sources) abs(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(s.cwd, p)
}
