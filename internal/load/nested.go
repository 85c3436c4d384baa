package load

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/parser"
)

// nestedHead is how much of a nested file is read for its package clause
// (comments may come first; the clause is never far).
const nestedHead = 64 << 10

// warnNested warns about each .cue file below dir that declares dir's
// package pkg. A CUE package is the files of one directory (a
// subdirectory's files are a package instance of their own), so wlc
// neither vets nor exports them: a workload written there, as perf-eval's
// per-model folders would suggest, would silently never run. Hidden
// directories, _-prefixed ones, testdata and cue.mod are not looked in.
func (l *loader) warnNested(dir, pkg string) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil // unreadable: not ours to report
		case d.IsDir():
			name := d.Name()
			if p != dir && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "cue.mod") {
				return filepath.SkipDir
			}
			return nil
		case filepath.Dir(p) == dir || !strings.HasSuffix(p, ".cue") || !d.Type().IsRegular():
			return nil
		}
		clause := packageClause(p)
		if clause == nil || clause.Name.Name != pkg {
			return nil
		}
		pos := clause.Name.Pos()
		l.res.Diags.Warnf(l.rel(p), pos.Line(), pos.Column(), "", "is in a subdirectory of %s, so wlc does not read it (a CUE package is the files of one directory): its workloads are neither vetted nor exported; move it into %s", l.rel(dir), l.rel(dir))
		return nil
	})
}

// PackageName is the package the .cue file at path declares, "" when it
// declares none (or does not parse). Only the file's head is read.
func PackageName(path string) string {
	if c := packageClause(path); c != nil {
		return c.Name.Name
	}
	return ""
}

// packageClause is the package clause of the .cue file at path, or nil
// (none, or one that does not parse). Only the file's head is read.
func packageClause(path string) *ast.Package {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	head, err := io.ReadAll(io.LimitReader(f, nestedHead))
	if err != nil {
		return nil
	}
	pf, err := parser.ParseFile(path, head, parser.PackageClauseOnly)
	if err != nil {
		return nil
	}
	for _, d := range pf.Decls {
		if c, ok := d.(*ast.Package); ok && c.Name != nil {
			return c
		}
	}
	return nil
}
