package load

import (
	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/token"
)

// progress tells the budget which workload is being evaluated, and where
// the user wrote it (its label; reading it evaluates nothing). labels is
// the files' index (see labelIndex): labelPos searched every file for
// every workload, a shard's 32 workloads times its 35 files, 1% of a
// cold vet of 1,000.
func (l *loader) progress(wv cue.Value, labels map[[2]string]token.Pos) {
	if l.opts.Progress == nil {
		return
	}
	sels := wv.Path().Selectors()
	if len(sels) == 0 {
		l.opts.Progress.Set("", "workload "+wv.Path().String())
		return
	}
	what := "workload " + sels[len(sels)-1].Unquoted()
	var pos token.Pos
	if len(sels) == 2 && sels[0].IsString() && sels[1].IsString() {
		pos = labels[[2]string{sels[0].Unquoted(), sels[1].Unquoted()}]
	} else {
		pos = l.labelPos(sels)
	}
	file := ""
	if pos.IsValid() {
		file = l.rel(pos.Filename())
	}
	l.opts.Progress.Set(file, what)
}

// labelIndex maps each two-label path (workloads.w) to the label labelPos
// finds for it in files: the same search (files, then declarations in
// order, into embeddings, both sides of & and parentheses), done once for
// every path, the first found kept.
func labelIndex(files []*ast.File) map[[2]string]token.Pos {
	idx := map[[2]string]token.Pos{}
	var outer func(decls []ast.Decl)
	var inner func(parent string, e ast.Expr)
	var outerExpr func(e ast.Expr)
	// The expressions findLabelExpr descends into: a struct's
	// declarations, both sides of &, a parenthesized expression.
	descend := func(e ast.Expr, decls func([]ast.Decl), again func(ast.Expr)) {
		switch x := e.(type) {
		case *ast.StructLit:
			decls(x.Elts)
		case *ast.BinaryExpr:
			if x.Op == token.AND {
				again(x.X)
				again(x.Y)
			}
		case *ast.ParenExpr:
			again(x.X)
		}
	}
	outer = func(decls []ast.Decl) {
		for _, d := range decls {
			switch x := d.(type) {
			case *ast.Field:
				name, _, err := ast.LabelName(x.Label)
				if err == nil {
					inner(name, x.Value)
				}
			case *ast.EmbedDecl:
				outerExpr(x.Expr)
			}
		}
	}
	outerExpr = func(e ast.Expr) { descend(e, outer, outerExpr) }
	inner = func(parent string, e ast.Expr) {
		descend(e, func(decls []ast.Decl) {
			for _, d := range decls {
				switch x := d.(type) {
				case *ast.Field:
					name, _, err := ast.LabelName(x.Label)
					if err != nil {
						continue
					}
					if k := [2]string{parent, name}; !idx[k].IsValid() {
						idx[k] = x.Label.Pos()
					}
				case *ast.EmbedDecl:
					inner(parent, x.Expr)
				}
			}
		}, func(e ast.Expr) { inner(parent, e) })
	}
	for _, f := range files {
		outer(f.Decls)
	}
	return idx
}
