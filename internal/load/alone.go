package load

import (
	"fmt"
	"os"
	"path/filepath"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/format"
	"cuelang.org/go/cue/load"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"
)

// A Decl is one top-level declaration of a file: where it starts and what
// it declares.
type Decl struct {
	Pos   token.Position
	Label string
}

// Decls are the top-level declarations of a file after its package
// clause and imports; parsing evaluates nothing.
func Decls(file string) ([]Decl, error) {
	_, body, err := parseAlone(file)
	if err != nil {
		return nil, err
	}
	var decls []Decl
	for _, d := range body {
		label := "a declaration"
		if fd, ok := d.(*ast.Field); ok {
			if name, _, err := ast.LabelName(fd.Label); err == nil {
				label = name
			}
		}
		decls = append(decls, Decl{Pos: d.Pos().Position(), Label: label})
	}
	return decls, nil
}

func parseAlone(file string) (head, body []ast.Decl, err error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, err
	}
	f, err := parser.ParseFile(file, src, parser.ParseComments)
	if err != nil {
		return nil, nil, err
	}
	for _, d := range f.Decls {
		switch d.(type) {
		case *ast.Package, *ast.ImportDecl, *ast.CommentGroup, *ast.Attribute:
			if len(body) == 0 {
				head = append(head, d)
				continue
			}
		}
		body = append(body, d)
	}
	return head, body, nil
}

// EvalAlone evaluates one file of a workloads package on its own, with
// its package clause, its imports and only its first keep declarations
// (keep < 0: all of them; see Decls). It exists to find, after the
// package outgrew wlc's budget, the declaration that grows: evaluation
// cannot be stopped, so the caller runs it in a child process it can
// kill. What the file says about other files' values fails here and is
// ignored: only the growth matters, so evaluation errors are not
// returned.
func EvalAlone(ctx *cue.Context, file string, keep int) error {
	abs, err := filepath.Abs(file)
	if err != nil {
		return err
	}
	head, body, err := parseAlone(abs)
	if err != nil {
		return err
	}
	if keep >= 0 && keep < len(body) {
		body = body[:keep]
	}
	root, ok := findModuleRoot(filepath.Dir(abs))
	if !ok {
		return fmt.Errorf("no cue.mod/module.cue above %s", file)
	}
	l := &loader{ctx: ctx, res: &Result{}}
	l.useModule(root)
	overlay, err := l.schemaOverlay()
	if err != nil {
		return err
	}
	part, err := format.Node(&ast.File{Filename: abs, Decls: append(head, body...)})
	if err != nil {
		return err
	}
	overlay[abs] = load.FromBytes(part)
	insts := load.Instances([]string{abs}, &load.Config{Dir: root, ModuleRoot: root, Overlay: overlay})
	if len(insts) == 1 && insts[0].Err == nil {
		ctx.BuildInstance(insts[0]).Validate(cue.Concrete(true), cue.All())
	}
	return nil
}
