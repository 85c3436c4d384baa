package load

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/token"

	"github.com/wlcdev/wlc/internal/check"
	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/internal/diag/suggest"
)

// packageFields are the regular top-level fields a workloads package may
// define; helpers are hidden fields (_x), definitions (#X) or lets.
var packageFields = []string{"workloads", "profiles", "settings"}

// checkTopLevel refuses a regular top-level field the package does not
// define: CUE would accept `workload: x: {...}` (a typo of workloads) and
// the workload would silently disappear from the run.
func (l *loader) checkTopLevel() {
	for _, f := range l.files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.Field)
			if !ok {
				continue
			}
			name, isIdent, err := ast.LabelName(fd.Label)
			if err != nil || (isIdent && (strings.HasPrefix(name, "_") || strings.HasPrefix(name, "#"))) {
				continue
			}
			if slices.Contains(packageFields, name) {
				continue
			}
			msg := fmt.Sprintf("unknown top-level field %s: a workloads package defines workloads, profiles and settings (keep helpers in hidden fields _name, definitions #Name or let)", name)
			if s := suggest.Closest(packageFields, name); s != "" {
				msg += fmt.Sprintf("; did you mean %s?", s)
			}
			l.addAt(l.at(fd.Label.Pos()), name, msg)
		}
	}
}

// checkDefinedTwice names both files when a workload defined in several
// files fails: CUE blames one field of the conflict, and the user needs to
// know the other definition exists. defs are workloadDefs' of the
// package's files.
func (l *loader) checkDefinedTwice(defs map[string][]token.Pos) {
	names := make([]string, 0, len(defs))
	for n, ps := range defs {
		if len(ps) > 1 {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		prefix := "workloads." + check.Label(n)
		failed := false
		for _, d := range l.res.Diags {
			if d.Severity == diag.Error && (d.Path == prefix || strings.HasPrefix(d.Path, prefix+".")) {
				failed = true
				break
			}
		}
		if !failed {
			continue // split across files and consistent: fine
		}
		var where []string
		for _, p := range defs[n] {
			where = append(where, fmt.Sprintf("%s:%d:%d", l.rel(p.Filename()), p.Line(), p.Column()))
		}
		ps := defs[n]
		l.addAt(l.at(ps[len(ps)-1]), prefix, fmt.Sprintf("workload %s is defined in %d places (%s) and the definitions conflict (see the errors on its fields); keep one definition", n, len(ps), strings.Join(where, ", ")))
	}
}

func (l *loader) addAt(at position, path, msg string) {
	l.res.Diags.Add(diag.Diagnostic{Severity: diag.Error, File: at.File, Line: at.Line, Column: at.Column, Path: path, Message: msg})
}

// workloadDefs lists, for each workload name, the positions of its
// definitions (`workloads: name:` labels) in files, in order.
func workloadDefs(files []*ast.File) map[string][]token.Pos {
	defs := map[string][]token.Pos{}
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.Field)
			if !ok {
				continue
			}
			if name, _, err := ast.LabelName(fd.Label); err != nil || name != "workloads" {
				continue
			}
			st, ok := fd.Value.(*ast.StructLit)
			if !ok {
				continue
			}
			for _, e := range st.Elts {
				if wf, ok := e.(*ast.Field); ok {
					if w, _, err := ast.LabelName(wf.Label); err == nil {
						defs[w] = append(defs[w], wf.Label.Pos())
					}
				}
			}
		}
	}
	return defs
}
