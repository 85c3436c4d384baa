package load

import (
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"

	"github.com/wlcdev/wlc/internal/diag"
)

// Hidden errors. Once a field of a struct fails, CUE v0.17 makes every
// selector through that struct an error, so the struct's cross-field
// rules go silent: `serve: {max_num_seqs: 0, tensor_parallel_size: 3}`
// reported the bound and hid TP×DP until the bound was fixed, one run per
// mistake. revealHidden evaluates the failed workloads again with each
// value already reported replaced by an unknown one. A rule reading an
// unknown value stays incomplete and silent, as it should: nothing is
// known of it; a rule over the sound fields fires. A refused value in a
// profile fails every reference through profiles, which each workload
// makes: where a failed workload's errors name one, it is made unknown
// too (in a shard, in a copy of the shared file: every shard compiles it).
//
// The unknown value is `_` where that leaves the field unknown: it keeps
// the schema's type, so the field is still set for the rules asking
// whether it is (`x != _|_`). Where the schema's default (or a value it
// computes) would fill it, the rules would read that instead of what the
// user meant (tensor_parallel_size: 8.0 read as its default 1 makes TP×DP
// "1 × 1 × 1 = 1"), so the field takes `({...}).v`, a field of an open
// struct nobody defines, which CUE holds incomplete and no default fills.
// Dropping the fields instead would have the same fault as `_`.

// revealRounds bounds the rounds of evaluation after the first: each
// replaces what the one before newly reported.
const revealRounds = 3

// revealMost is the most workloads a package loaded as one may hold for
// revealHidden to evaluate it again: a round costs about what the first
// evaluation did, tens of milliseconds at this size, seconds for a
// thousand workloads. (A shard is evaluated again with only the failed
// workloads' files.)
const revealMost = 128

// failure is why a workload failed: CUE's validation error, and the
// findings reported for it.
type failure struct {
	err   error
	diags []diag.Diagnostic
}

// revealHidden reports the errors that the ones already reported hid in
// the failed workloads (by name). It builds again the instance l.pkg was
// built from (l.inst), with the user's values under workloads.<name>, and
// a profile's its errors name, edited, and restores them before it
// returns. n is how many workloads the instance holds.
func (l *loader) revealHidden(failed map[string]failure, n int) {
	if l.inst == nil || len(failed) == 0 {
		return
	}
	inst := l.inst
	if l.shared != nil {
		// A shard's workload files stand alone beside the shared files
		// (see planShards): the failed workloads' files are enough.
		only := *inst
		only.Files = slices.DeleteFunc(slices.Clone(inst.Files), func(f *ast.File) bool {
			if slices.Contains(l.shared, f) {
				return false
			}
			for name := range workloadDefs([]*ast.File{f}) {
				if _, ok := failed[name]; ok {
					return false
				}
			}
			return true
		})
		inst = &only
	}
	if l.shared == nil && n > revealMost {
		return
	}
	done := map[place]bool{}
	var holes []*hole
	defer func() {
		for _, h := range slices.Backward(holes) {
			h.undo()
		}
	}()
	files := slices.Clone(l.files)
	for range revealRounds {
		var found []*hole
		for _, name := range slices.Sorted(maps.Keys(failed)) {
			for _, pl := range l.places(failed[name]) {
				if done[pl] {
					continue
				}
				done[pl] = true
				for i, f := range files {
					if l.rel(f.Filename) != pl.file {
						continue
					}
					// Every shard compiles the shared files: one edits a
					// copy of its own (a refused profile value).
					target, shared := f, l.shared != nil && slices.Contains(l.shared, f)
					if shared {
						cp, ok := reparse(f)
						if !ok {
							continue
						}
						target = cp
					}
					ed := &editor{name: name, line: pl.line, col: pl.col, drop: pl.drop}
					h := ed.decls(&target.Decls, nil)
					if h == nil {
						continue
					}
					found = append(found, h)
					if shared {
						files[i] = target
						inst.Files[slices.Index(inst.Files, f)] = target
					}
				}
			}
		}
		if len(found) == 0 {
			return
		}
		holes = append(holes, found...)
		pkg, ok := rebuild(inst)
		if !ok {
			return
		}
		// A field that `_` leaves known takes the incomplete value. One
		// that cannot be read yet (its struct still fails for another
		// value, holed in a later round) is looked at again then; until
		// then no rule reads through it either.
		refill := false
		for _, h := range holes {
			if h.at == nil || h.checked {
				continue // a dropped field, or one already settled
			}
			v := pkg.LookupPath(cue.MakePath(h.path...))
			if v.Err() != nil {
				continue
			}
			h.checked = true
			if _, def := v.Default(); def || (v.IsConcrete() && v.Kind()&(cue.StructKind|cue.ListKind) == 0) {
				h.incomplete()
				refill = true
			}
		}
		if refill {
			if pkg, ok = rebuild(inst); !ok {
				return
			}
		}
		s := *l
		s.pkg, s.defsBuilt = pkg, nil
		s.ctx = pkg.Context()
		next := map[string]failure{}
		for _, name := range slices.Sorted(maps.Keys(failed)) {
			// Not Concrete: an unknown value and what is computed from it
			// are incomplete, which is not news.
			err := pkg.LookupPath(cue.MakePath(cue.Str("workloads"), cue.Str(name))).Validate(cue.Final())
			if err == nil {
				continue
			}
			before := len(l.res.Diags)
			s.addCUEError(err, pkg)
			kept := l.res.Diags[:before]
			for _, d := range l.res.Diags[before:] {
				if !slices.ContainsFunc(holes, func(h *hole) bool { return h.mayExplain(d) }) {
					kept = append(kept, d)
				}
			}
			l.res.Diags = kept
			next[name] = failure{err, slices.Clone(kept[before:])}
		}
		failed = next
	}
}

// place is a place in the user's files a failure names: a value CUE
// refused (which makes its struct fail, hiding that struct's rules), or
// with drop a field it does not allow.
type place struct {
	file      string
	line, col int
	drop      bool
}

// places are the places of f's errors in the user's values. An error of
// a schema rule (reported from _check, at the field it blames) fails
// only _check, which no rule reads: its field is left as written.
func (l *loader) places(f failure) []place {
	var out []place
	for _, e := range cueerrors.Errors(f.err) {
		if slices.ContainsFunc(e.Path(), func(el string) bool { return strings.HasPrefix(el, "_") || strings.HasPrefix(el, "#") }) {
			continue
		}
		format, args := e.Msg()
		drop := strings.HasPrefix(fmt.Sprintf(format, args...), "field not allowed")
		for _, p := range cueerrors.Positions(e) {
			if !l.isSchema(p.Filename()) && !isTyping(p.Filename()) {
				out = append(out, place{l.rel(p.Filename()), p.Line(), p.Column(), drop})
			}
		}
	}
	// Fields not allowed beside a failing one: CUE does not report them,
	// the loader's walk of the source does (see validate).
	for _, d := range f.diags {
		if d.File != "" && strings.HasPrefix(d.Message, "field not allowed") {
			out = append(out, place{d.File, d.Line, d.Column, true})
		}
	}
	return out
}

// rebuild evaluates inst as its files now are in a context of its own.
// CUE compiles the files whole here, so the user's tree can be restored
// right after.
func rebuild(inst *build.Instance) (cue.Value, bool) {
	vals, err := cuecontext.New().BuildInstances([]*build.Instance{inst})
	if err != nil {
		return cue.Value{}, false
	}
	return vals[0], true
}

// hole is one edit of the user's tree: the value at path replaced by an
// unknown one (at), or the field at path dropped.
type hole struct {
	path    []cue.Selector
	at      *ast.Expr
	old     ast.Expr
	undo    func()
	checked bool // whether `_` was seen to leave it unknown (or replaced)
}

// mayExplain reports whether a finding of a round with h in place may
// come from h rather than from what the user wrote. CUE reads an unknown
// value as absent (`x == _|_` holds for any value that is not concrete),
// so a rule asking whether the field is set fires although the user set
// it: such a rule names the field it misses, or reports at a struct
// holding it ("custom step has neither script nor command" at the step,
// "enable_auto_tool_choice needs serve.tool_call_parser"); and what is
// found inside a struct made unknown is not about what the user wrote. A
// rule reading the value stays silent, so dropping these loses nothing
// the user needs now: the first error's fix brings them back if real.
func (h *hole) mayExplain(d diag.Diagnostic) bool {
	at := cue.MakePath(h.path...).String()
	if under(at, d.Path) || under(d.Path, at) {
		return true
	}
	if !under(d.Path, cue.MakePath(h.path[:2]...).String()) {
		return false // another workload's
	}
	for _, s := range slices.Backward(h.path) {
		if s.Type() == cue.StringLabel {
			return regexp.MustCompile(`\b` + regexp.QuoteMeta(s.Unquoted()) + `\b`).MatchString(d.Message)
		}
	}
	return false
}

// incomplete puts the value no default fills in the hole.
func (h *hole) incomplete() {
	*h.at = &ast.SelectorExpr{X: &ast.ParenExpr{X: &ast.StructLit{Elts: []ast.Decl{&ast.Ellipsis{}}}}, Sel: ast.NewIdent("v")}
}

// editor finds, in a file's declaration of workloads.<name>, what a
// finding at line:col names and makes it a hole: a field's value or a
// list element written there, or the value of a field whose label is
// there; with drop, only a field whose label is there, removed (one CUE
// does not allow: its error also names the struct holding it, which is
// not the place). The workload's own field is never edited.
type editor struct {
	name      string
	line, col int
	drop      bool
}

// mayEdit reports whether the field at p is the editor's to edit: under
// its workload, or under a profile (a refused value of a profile fails
// every workload, since all reach the profiles, and it is reported on
// the profile).
func (ed *editor) mayEdit(p []cue.Selector) bool {
	switch p[0].Unquoted() {
	case "workloads":
		return len(p) == 1 || p[1].Unquoted() == ed.name
	case "profiles":
		return true
	}
	return false
}

// reparse is a copy of f, parsed again from its file.
func reparse(f *ast.File) (*ast.File, bool) {
	src, err := os.ReadFile(f.Filename)
	if err != nil {
		return nil, false
	}
	cp, err := parser.ParseFile(f.Filename, src, parser.ParseComments)
	return cp, err == nil
}

func (ed *editor) at(p token.Pos) bool {
	return p.IsValid() && p.Line() == ed.line && p.Column() == ed.col
}

func (ed *editor) decls(decls *[]ast.Decl, path []cue.Selector) *hole {
	for i, d := range *decls {
		switch x := d.(type) {
		case *ast.Field:
			label, ok := plainLabel(x)
			if !ok {
				continue
			}
			p := append(slices.Clip(path), cue.Str(label))
			if !ed.mayEdit(p) {
				continue
			}
			if len(p) > 2 && ed.at(x.Label.Pos()) {
				if ed.drop {
					old := *decls
					*decls = slices.Delete(slices.Clone(old), i, i+1)
					return &hole{path: p, undo: func() { *decls = old }}
				}
				return replace(&x.Value, p)
			}
			// Inner places first: `serve: tensor_parallel_size: 1e12`
			// starts serve's struct where its field's label does.
			if h := ed.expr(&x.Value, p); h != nil {
				return h
			}
			if len(p) > 2 && !ed.drop && ed.at(x.Value.Pos()) {
				return replace(&x.Value, p)
			}
		case *ast.EmbedDecl:
			if h := ed.expr(&x.Expr, path); h != nil {
				return h
			}
		}
	}
	return nil
}

func (ed *editor) expr(e *ast.Expr, path []cue.Selector) *hole {
	switch x := (*e).(type) {
	case *ast.StructLit:
		return ed.decls(&x.Elts, path)
	case *ast.ListLit:
		if len(path) < 3 {
			return nil
		}
		if slices.ContainsFunc(x.Elts, func(e ast.Expr) bool { _, ok := e.(*ast.Comprehension); return ok }) {
			return nil // its elements' indices are known only once evaluated
		}
		for i := range x.Elts {
			if _, ok := x.Elts[i].(*ast.Ellipsis); ok {
				continue // not an element: the list's type
			}
			p := append(slices.Clip(path), cue.Index(i))
			if h := ed.expr(&x.Elts[i], p); h != nil {
				return h
			}
			if !ed.drop && ed.at(x.Elts[i].Pos()) {
				return replace(&x.Elts[i], p)
			}
		}
	case *ast.BinaryExpr: // helper & {...}
		if h := ed.expr(&x.X, path); h != nil {
			return h
		}
		return ed.expr(&x.Y, path)
	case *ast.ParenExpr:
		return ed.expr(&x.X, path)
	}
	return nil
}

// replace makes *e, the value at path, a hole holding `_`.
func replace(e *ast.Expr, path []cue.Selector) *hole {
	h := &hole{path: path, at: e, old: *e}
	h.undo = func() { *e = h.old }
	*e = ast.NewIdent("_")
	return h
}

// under reports whether path is at or below the path prefix.
func under(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+".") || strings.HasPrefix(path, prefix+"[")
}
