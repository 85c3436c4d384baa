package load

import (
	"maps"
	"os"
	"path/filepath"

	"cuelang.org/go/cue/ast"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/literal"
	"cuelang.org/go/cue/load"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/scanner"
	"cuelang.org/go/cue/token"
)

// One workload file CUE cannot read or build would hide every other
// error of the package: a syntax error makes cue/load drop the whole
// package, and a compile error (an unquoted string such as `precision:
// bf16` is a reference to nothing) fails the package's build. In a
// package of hundreds of workloads one typo would hide the rest until it
// is fixed (plain cue vet stops there too). When every file CUE reports is
// a workload file, the package is loaded again with those files read as
// their package clause alone (a load overlay, as an editor hands cue/load
// an unsaved buffer): CUE's errors are reported and the other workloads
// are vetted in the same run, while the broken files' workloads go
// unchecked.
//
// That is sound only if the other files evaluate the same without the
// broken ones. A parser's partial tree says little past a syntax error
// (an unclosed brace swallows every later declaration), so what a broken
// file may declare is read from its tokens: every name written as a label
// (`name:`), at any depth. The package is vetted past the broken files
// only when no other file defines part of a workload or top-level field
// labelled in one, or refers to such a name that no file declares, or
// reads `workloads` itself; otherwise CUE's errors are reported alone.

// brokenFiles are workload files the package is loaded without.
type brokenFiles struct {
	pkg    map[string]string // file → its package clause's name
	labels map[string]bool   // every label the files write
	err    error             // what CUE reported of them
}

// brokenWorkloadFiles returns the files err reports, when each is a
// workload file of the package in dir, or nil. parsed are the package's
// trees when it parsed (a compile error); a file missing there is parsed
// again, for what its syntax error left.
func brokenWorkloadFiles(err error, dir string, parsed []*ast.File) *brokenFiles {
	b := &brokenFiles{pkg: map[string]string{}, labels: map[string]bool{}, err: err}
	for _, e := range cueerrors.Errors(err) {
		pos := e.Position()
		if !pos.IsValid() || filepath.Dir(pos.Filename()) != dir {
			return nil // not an error of a file of the package
		}
		b.pkg[pos.Filename()] = ""
	}
	if len(b.pkg) == 0 {
		return nil
	}
	trees := map[string]*ast.File{}
	for _, f := range parsed {
		trees[f.Filename] = f
	}
	for file := range b.pkg {
		src, rerr := os.ReadFile(file)
		if rerr != nil {
			return nil
		}
		f := trees[file]
		if f == nil {
			f, _ = parser.ParseFile(file, src, parser.ParseComments)
		}
		if f == nil || f.PackageName() == "" {
			return nil
		}
		if _, ok := workloadFile(f); !ok {
			return nil // profiles, settings, helpers: any workload may need them
		}
		b.pkg[file] = f.PackageName()
		for name := range labels(file, src) {
			b.labels[name] = true
		}
	}
	return b
}

// dropBroken makes the run end for a load without the workload files err
// reports (Load runs it), besides those this run already left out, when
// they can be left out.
func (l *loader) dropBroken(err error, dir string, parsed []*ast.File) bool {
	b := brokenWorkloadFiles(err, dir, parsed)
	if b == nil {
		return false
	}
	if w := l.opts.without; w != nil {
		// A compile error shows once the syntax errors' files are gone.
		// A file left out is a package clause, which cannot fail; were
		// it reported again, loading without it changed nothing.
		for file := range b.pkg {
			if _, ok := w.pkg[file]; ok {
				return false
			}
		}
		maps.Copy(b.pkg, w.pkg)
		maps.Copy(b.labels, w.labels)
		b.err = cueerrors.Append(cueerrors.Promote(w.err, ""), cueerrors.Promote(err, ""))
	}
	l.broken = b
	return true
}

// overlay reads each broken file as its package clause alone.
func (b *brokenFiles) overlay(o map[string]load.Source) {
	for file, pkg := range b.pkg {
		o[file] = load.FromString("package " + pkg + "\n")
	}
}

// soundWithout reports whether the package's other files (files, loaded
// without the broken ones) evaluate as they would with them.
func (b *brokenFiles) soundWithout(files []*ast.File) bool {
	for _, f := range files {
		if _, ok := b.pkg[f.Filename]; ok {
			continue
		}
		if referencedNames(f)["workloads"] {
			return false
		}
		// What f refers to that no file of the package declares now
		// (cue/load resolved the rest): a broken file may have held it.
		for _, id := range f.Unresolved {
			if b.labels[id.Name] {
				return false
			}
		}
		for name := range workloadDefs([]*ast.File{f}) {
			if b.labels[name] {
				return false
			}
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.Field); ok {
				if name, _, err := ast.LabelName(fd.Label); err != nil || (name != "workloads" && b.labels[name]) {
					return false
				}
			}
		}
	}
	return true
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
