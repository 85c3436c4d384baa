package load

import (
	"maps"
	"os"
	"path/filepath"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/literal"
	"cuelang.org/go/cue/load"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/scanner"
	"cuelang.org/go/cue/token"
)

// A syntax error in one workload file makes cue/load drop the whole
// package (no files, only the parse errors), so in a package of hundreds
// of workloads one typo would hide every other error until it is fixed.
// When each file that does not parse is a workload file, the package is
// loaded again with those files read as their package clause alone (a
// load overlay, as an editor hands cue/load an unsaved buffer): the syntax
// errors are reported and the other workloads are vetted in the same run,
// while the broken files' workloads go unchecked.
//
// That is sound only if the other files evaluate the same without the
// broken ones. A parser's partial tree says little past the error (an
// unclosed brace swallows every later declaration), so what a broken file
// may declare is read from its tokens: every name written as a label
// (`name:`), at any depth. The package is vetted past the syntax errors
// only when no other file defines part of a workload or top-level field
// labelled in a broken file, or refers to such a name that no file
// declares, or reads `workloads` itself; otherwise the syntax errors are
// reported alone.

// pastSyntaxErrors returns the package's instances loaded without the
// files whose syntax errors err reports, or nil when that is not sound;
// the caller reports err either way.
func (l *loader) pastSyntaxErrors(err error, inst *build.Instance, args []string, cfg *load.Config, dir string) []*build.Instance {
	if len(inst.Files) > 0 {
		return nil
	}
	broken := map[string]bool{}
	for _, e := range cueerrors.Errors(err) {
		pos := e.Position()
		if !pos.IsValid() || filepath.Dir(pos.Filename()) != dir {
			return nil // not a syntax error in a file of the package
		}
		broken[pos.Filename()] = true
	}
	if len(broken) == 0 {
		return nil
	}
	overlay := maps.Clone(cfg.Overlay)
	if overlay == nil {
		overlay = map[string]load.Source{}
	}
	labelled := map[string]bool{} // every label of every broken file
	for file := range broken {
		src, rerr := os.ReadFile(file)
		if rerr != nil {
			return nil
		}
		f, perr := parser.ParseFile(file, src, parser.ParseComments)
		if perr == nil || f == nil || f.PackageName() == "" {
			return nil // cue/load's error is not this file's syntax
		}
		if _, ok := workloadFile(f); !ok {
			return nil // profiles, settings, helpers: any workload may need them
		}
		for name := range labels(file, src) {
			labelled[name] = true
		}
		overlay[file] = load.FromString("package " + f.PackageName() + "\n")
	}
	again := *cfg
	again.Overlay = overlay
	insts := load.Instances(args, &again)
	for _, in := range insts {
		if in.Err != nil {
			return nil
		}
	}
	for _, f := range insts[0].Files {
		if broken[f.Filename] {
			continue
		}
		if referencedNames(f)["workloads"] {
			return nil
		}
		// What f refers to that no file of the package declares now
		// (cue/load resolved the rest): a broken file may have held it.
		for _, id := range f.Unresolved {
			if labelled[id.Name] {
				return nil
			}
		}
		for name := range workloadDefs([]*ast.File{f}) {
			if labelled[name] {
				return nil
			}
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.Field); ok {
				if name, _, err := ast.LabelName(fd.Label); err != nil || (name != "workloads" && labelled[name]) {
					return nil
				}
			}
		}
	}
	return insts
}

// labels are the names src writes as a field's label: an identifier or a
// string followed by `:` (or `?:`, `!:`), wherever it stands.
func labels(file string, src []byte) map[string]bool {
	var s scanner.Scanner
	s.Init(token.NewFile(file, -1, len(src)), src, nil, 0)
	names := map[string]bool{}
	prev := ""
	for {
		_, tok, lit := s.Scan()
		switch tok {
		case token.EOF:
			return names
		case token.IDENT:
			prev = lit
			continue
		case token.STRING:
			prev = ""
			if u, err := literal.Unquote(lit); err == nil {
				prev = u
			}
			continue
		case token.OPTION, token.NOT:
			if prev != "" {
				continue // `name?:`, `name!:`: prev still labels
			}
		case token.COLON:
			if prev != "" {
				names[prev] = true
			}
		}
		prev = ""
	}
}
