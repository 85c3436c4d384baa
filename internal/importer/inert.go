package importer

import (
	"fmt"
	"strconv"
	"strings"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/parser"
)

// commentText makes a YAML value safe inside a `//` comment: a line break
// (or any control character) would end the comment and turn the rest of
// the value into CUE, so those are written escaped, as in a Go string.
func commentText(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isControl(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isControl(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029'
}

// checkShape is the importer's last guard: the generated file declares the
// one workload it converts (and the lets it uses), nothing else, whatever
// the YAML held.
func checkShape(src []byte, key string) error {
	f, err := parser.ParseFile("import.cue", src)
	if err != nil {
		return err
	}
	seen := 0
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.Package, *ast.ImportDecl, *ast.LetClause, *ast.CommentGroup, *ast.Attribute:
			continue
		case *ast.Field:
			name, _, _ := ast.LabelName(d.Label)
			if name != "workloads" {
				return fmt.Errorf("declares the top-level field %q", name)
			}
			// workloads: key: {...} parses as a struct of one field.
			st, ok := d.Value.(*ast.StructLit)
			if !ok {
				return fmt.Errorf("workloads is not a struct")
			}
			for _, e := range st.Elts {
				if _, ok := e.(*ast.CommentGroup); ok {
					continue
				}
				fd, ok := e.(*ast.Field)
				if !ok {
					return fmt.Errorf("workloads holds a %T", e)
				}
				n, _, _ := ast.LabelName(fd.Label)
				if n != key {
					return fmt.Errorf("declares workload %q besides %q", n, key)
				}
				seen++
			}
		default:
			return fmt.Errorf("holds a top-level %T", d)
		}
	}
	if seen != 1 {
		return fmt.Errorf("declares %d workloads, want exactly %q", seen, key)
	}
	return nil
}
