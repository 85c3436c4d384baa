package load

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/token"

	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/internal/diag/suggest"
	"github.com/wlcdev/wlc/schema"
)

// validate checks v completely. CUE stops reporting a struct's own errors
// (such as a field not allowed) and refuses to list its fields once one of
// its children fails, so on failure the user's source is walked and every
// value it defines under v is validated on its own: every error is reported
// in one run.
func (l *loader) validate(v, pkg cue.Value) bool {
	err := v.Validate(cue.Concrete(true), cue.Final())
	if err == nil {
		return true
	}
	l.reportInvalid(v, pkg, err)
	return false
}

// reportInvalid reports why v failed validation with err.
func (l *loader) reportInvalid(v, pkg cue.Value, err error) {
	before := len(l.res.Diags)
	l.addCUEError(err, pkg)
	defer func() {
		// Never drop a workload or profile silently: if every error was
		// filtered as a repeat, report CUE's first one as it is.
		// Errors inside a workload's profile (#profile, _profile, or the
		// profile itself, profiles.<name>, which #profile refers to) were
		// reported on the profile.
		if len(l.res.Diags) > before {
			return
		}
		for _, e := range cueerrors.Errors(err) {
			if indexOf(e.Path(), "#profile") >= 0 || indexOf(e.Path(), "_profile") >= 0 || indexOf(e.Path(), "profiles") == 0 {
				continue
			}
			var path []string
			for _, s := range v.Path().Selectors() {
				path = append(path, selLabel(s))
			}
			d := diag.Diagnostic{Severity: diag.Error, Path: cuePath(path), Message: cleanMessage(e.Error())}
			if pos := l.blamePos(pkg, path); pos.IsValid() {
				d.File, d.Line, d.Column = l.rel(pos.Filename()), pos.Line(), pos.Column()
			}
			l.res.Diags.Add(d)
			return
		}
	}()
	prefix := v.Path().Selectors()
	for _, f := range l.files {
		l.walkDecls(f.Decls, nil, prefix)
	}
	l.missingRequired(v, pkg)
}

// missingRequired reports every required field of a workload or profile
// the user left out: CUE names only the first one a comprehension waits
// for, and a failed struct cannot list its fields, so the definition's
// required fields are looked up in the user's source.
func (l *loader) missingRequired(v, pkg cue.Value) {
	path := v.Path().Selectors()
	if len(path) != 2 {
		return
	}
	def, ok := l.defFor(path[0].String())
	if !ok {
		return
	}
	it, err := def.Fields(cue.Optional(true))
	if err != nil {
		return
	}
	for it.Next() {
		sel := it.Selector()
		if sel.ConstraintType() != cue.RequiredConstraint {
			continue
		}
		name := strings.TrimSuffix(sel.String(), "!")
		if (name == "model" || name == "precision") && l.labelPos(append(append([]cue.Selector(nil), path...), cue.Str("recipe"))).IsValid() {
			continue // derived from the recipe
		}
		if l.labelPos(append(append([]cue.Selector(nil), path...), cue.Str(name))).IsValid() {
			continue
		}
		// Not under the workload's own label, yet given: unified in from
		// a helper (workloads: x: _base & {...}).
		if f := v.LookupPath(cue.MakePath(cue.Str(name))); f.Exists() && f.IsConcrete() {
			continue
		}
		l.addCUEError(cueerrors.Newf(token.NoPos, "required field missing: %s", name), pkg, v.Path())
	}
}

// walkDecls follows the user's struct literals along path, validating each
// value under prefix and asking its parent whether the field is allowed.
func (l *loader) walkDecls(decls []ast.Decl, path, prefix []cue.Selector) {
	for _, d := range decls {
		switch x := d.(type) {
		case *ast.Field:
			name, _, err := ast.LabelName(x.Label)
			if err != nil || strings.HasPrefix(name, "_") || strings.HasPrefix(name, "#") {
				continue
			}
			sel := cue.Str(name)
			child := append(append([]cue.Selector(nil), path...), sel)
			if !isPrefix(child, prefix) && !isPrefix(prefix, child) {
				continue
			}
			if len(child) > len(prefix) {
				if !l.allowed(path, name) {
					why := l.whyNotAllowed(path, name, l.fieldNames(path))
					l.addCUEError(cueerrors.Newf(x.Label.Pos(), "field not allowed: %s", why), cue.Value{}, cue.MakePath(child...))
					continue
				}
				if v := l.pkg.LookupPath(cue.MakePath(child...)); v.Exists() {
					if err := v.Validate(cue.Concrete(true), cue.Final()); err != nil {
						l.addCUEError(err, l.pkg)
					}
				}
			}
			l.walkExpr(x.Value, child, prefix)
		case *ast.EmbedDecl:
			l.walkExpr(x.Expr, path, prefix)
		}
	}
}

func (l *loader) walkExpr(e ast.Expr, path, prefix []cue.Selector) {
	switch x := e.(type) {
	case *ast.StructLit:
		l.walkDecls(x.Elts, path, prefix)
	case *ast.ListLit:
		for i, el := range x.Elts {
			l.walkExpr(el, append(append([]cue.Selector(nil), path...), cue.Index(i)), prefix)
		}
	case *ast.BinaryExpr:
		if x.Op == token.AND {
			l.walkExpr(x.X, path, prefix)
			l.walkExpr(x.Y, path, prefix)
		}
	case *ast.ParenExpr:
		l.walkExpr(x.X, path, prefix)
	}
}

// allowed asks the schema definition governing path whether it allows a
// field called name. Concrete scalar siblings the user wrote are filled in
// first, so conditional fields (k8s when runtime is "k8s") are allowed.
func (l *loader) allowed(path []cue.Selector, name string) bool {
	if len(path) == 2 {
		// #Workload and #Profile hold comprehensions, and CUE allows any
		// field on a struct whose comprehensions are pending; their field
		// sets are the Go mirror types' (kept equal by the drift test).
		return topLevelFields(path[0].String())[name]
	}
	def, ok := l.schemaAt(path)
	return !ok || def.Allows(cue.Str(name))
}

// defFor is the definition typing the top-level field kind.
func (l *loader) defFor(kind string) (cue.Value, bool) {
	switch kind {
	case "workloads":
		return l.defs().workload, true
	case "profiles":
		return l.defs().profile, true
	}
	return cue.Value{}, false
}

// schemaAt follows the schema definition from a workload or profile down
// path (list elements and map values included) to the struct that types
// the user's struct at path, with the user's concrete scalars filled in.
// It reports false where the schema has no struct there.
func (l *loader) schemaAt(path []cue.Selector) (cue.Value, bool) {
	if len(path) < 3 {
		return cue.Value{}, false
	}
	def, ok := l.defFor(path[0].String())
	for _, sel := range path[2:] {
		if !ok || !def.Exists() {
			return cue.Value{}, false
		}
		if sel.Type() == cue.IndexLabel {
			def = def.LookupPath(cue.MakePath(cue.AnyIndex))
			continue
		}
		for _, try := range []cue.Selector{sel, sel.Optional(), cue.AnyString} {
			if def2 := def.LookupPath(cue.MakePath(try)); def2.Exists() {
				def = def2
				break
			}
		}
	}
	if !def.Exists() || def.IncompleteKind() != cue.StructKind {
		return cue.Value{}, false
	}
	return l.fillScalars(def, path), true
}

// fieldNames lists the fields the schema allows under path, for
// suggesting the one a misspelt label meant.
func (l *loader) fieldNames(path []cue.Selector) []string {
	if len(path) == 2 {
		return mirrorFields(path)
	}
	def, ok := l.schemaAt(path)
	if !ok {
		return mirrorFields(path)
	}
	it, err := def.Fields(cue.Optional(true))
	if err != nil {
		// A struct whose comprehensions wait for a missing field cannot
		// list its fields (#LMEval without tasks): its Go mirror can.
		return mirrorFields(path)
	}
	var names []string
	for it.Next() {
		names = append(names, it.Selector().Unquoted())
	}
	return names
}

// explainNotAllowed is CUE's bare "field not allowed" at path (a field of
// a workload or profile) with the walker's why and, for a name the schema
// has no field of, the field it likely meant. CUE reports it itself where
// the walker cannot ask: a struct with pending comprehensions allows any
// field (lm_eval: task: beside the tasks it checks).
func (l *loader) explainNotAllowed(path []string) string {
	const bare = "field not allowed"
	if len(path) < 3 || (path[0] != "workloads" && path[0] != "profiles") {
		return bare
	}
	p := cue.ParsePath(cuePath(path))
	if p.Err() != nil {
		return bare
	}
	sels := p.Selectors()
	name := path[len(path)-1]
	parent := sels[:len(sels)-1]
	if last := parent[len(parent)-1]; last.IsString() && last.Unquoted() == "max_test_cases" {
		// Its keys are BFCL categories (a pattern), not fields.
		var cats []string
		_ = l.defs().schema.LookupPath(cue.ParsePath("#BFCLCategories")).Decode(&cats)
		why := fmt.Sprintf("%s is not a BFCL test category, which max_test_cases is keyed by", name)
		if s := suggest.Closest(cats, name); s != "" {
			why += "; did you mean " + s + "?"
		}
		return bare + ": " + why
	}
	names := l.fieldNames(parent)
	if slices.Contains(names, name) {
		return bare // a field the schema has, refused here by a condition
	}
	return bare + ": " + l.whyNotAllowed(parent, name, names)
}

// whyNotAllowed says why name cannot be a field under path (notAllowed)
// and, for an unknown field, which of names (the fields there) it
// likely meant.
func (l *loader) whyNotAllowed(path []cue.Selector, name string, names []string) string {
	why := notAllowed(path, name)
	if s := suggest.Closest(names, name); s != "" && strings.HasSuffix(why, "(wlc show prints a resolved workload)") {
		why = fmt.Sprintf("%s is not a field here; did you mean %s?", name, s)
	}
	return why
}

// notAllowed says why name cannot be a field under path: maps keyed by
// variable names reject a malformed key, structs reject an unknown field.
func notAllowed(path []cue.Selector, name string) string {
	parent := ""
	if len(path) > 0 && path[len(path)-1].IsString() {
		parent = path[len(path)-1].Unquoted()
	}
	switch parent {
	case "env":
		return fmt.Sprintf("%s is not a valid environment variable name; use letters, digits and _, not starting with a digit", name)
	case "model_args", "metadata":
		return fmt.Sprintf("%s is not a valid %s key; use letters, digits and _, not starting with a digit", name, parent)
	}
	return fmt.Sprintf("%s is not a field here; check its spelling and the schema (wlc show prints a resolved workload)", name)
}

// labelPos is the position of the label of the field at path in the
// user's files (e.g. `w:` of workloads.w), or NoPos.
func (l *loader) labelPos(path []cue.Selector) token.Pos {
	for _, f := range l.files {
		if p := findLabel(f.Decls, path); p.IsValid() {
			return p
		}
	}
	return token.NoPos
}

func findLabel(decls []ast.Decl, path []cue.Selector) token.Pos {
	p := token.NoPos
	fieldsWritten(decls, path, func(f *ast.Field) bool {
		p = f.Label.Pos()
		return false
	})
	return p
}

// fieldsWritten calls yield with each field decls declare at path (a field
// can be written in several places, through struct literals, & and
// embeddings), in order; it stops, and reports false, once yield returns
// false.
func fieldsWritten(decls []ast.Decl, path []cue.Selector, yield func(*ast.Field) bool) bool {
	if len(path) == 0 || !path[0].IsString() {
		return true
	}
	return eachField(decls, func(name string, f *ast.Field) bool {
		if name != path[0].Unquoted() {
			return true
		}
		if len(path) == 1 {
			return yield(f)
		}
		return eachFieldOf(f.Value, func(decls []ast.Decl) bool {
			return fieldsWritten(decls, path[1:], yield)
		})
	})
}

// eachField calls yield with the fields decls declare, in order, those of
// embedded structs in place (see eachFieldOf), skipping a label without
// a name (dynamic, pattern); it stops, and reports false, once yield
// returns false. labelPos and labelIndex search the same fields.
func eachField(decls []ast.Decl, yield func(name string, f *ast.Field) bool) bool {
	for _, d := range decls {
		switch x := d.(type) {
		case *ast.Field:
			name, _, err := ast.LabelName(x.Label)
			if err == nil && !yield(name, x) {
				return false
			}
		case *ast.EmbedDecl:
			if !eachFieldIn(x.Expr, yield) {
				return false
			}
		}
	}
	return true
}

// eachFieldIn is eachField over the struct literals e is written as (see
// eachFieldOf): the fields of a field's value, or of an embedding.
func eachFieldIn(e ast.Expr, yield func(name string, f *ast.Field) bool) bool {
	return eachFieldOf(e, func(decls []ast.Decl) bool { return eachField(decls, yield) })
}

// eachFieldOf calls structs with the declarations of each struct literal
// among e's operands (andOperands); it stops, and reports false, once
// structs returns false.
func eachFieldOf(e ast.Expr, structs func([]ast.Decl) bool) bool {
	for _, c := range andOperands(e) {
		if s, ok := c.(*ast.StructLit); ok && !structs(s.Elts) {
			return false
		}
	}
	return true
}

// andOperands are the operands e is written as, in order: e itself, or both
// sides of &, inside parentheses or not.
func andOperands(e ast.Expr) []ast.Expr {
	switch x := e.(type) {
	case *ast.BinaryExpr:
		if x.Op == token.AND {
			return append(andOperands(x.X), andOperands(x.Y)...)
		}
	case *ast.ParenExpr:
		return andOperands(x.X)
	}
	return []ast.Expr{e}
}

// mirrorFields lists the JSON names of the Go mirror struct at path (a
// workload's or profile's, list elements and map values followed), or nil
// where the mirror has no struct there.
func mirrorFields(path []cue.Selector) []string {
	if len(path) < 2 {
		return nil
	}
	t := reflect.TypeOf(schema.Profile{})
	if path[0].String() == "workloads" {
		t = reflect.TypeOf(schema.Workload{})
	}
	elem := func(t reflect.Type) reflect.Type {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		return t
	}
	for _, sel := range path[2:] {
		t = elem(t)
		switch {
		case sel.Type() == cue.IndexLabel && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
			t = t.Elem()
		case sel.IsString() && t.Kind() == reflect.Map:
			t = t.Elem()
		case sel.IsString() && t.Kind() == reflect.Struct:
			f, ok := jsonFields(t)[sel.Unquoted()]
			if !ok {
				return nil
			}
			t = f.Type
		default:
			return nil
		}
	}
	if t = elem(t); t.Kind() != reflect.Struct {
		return nil
	}
	return slices.Sorted(maps.Keys(jsonFields(t)))
}

// jsonFields are t's fields by JSON name (the tag's; untagged and "-"
// fields are not the schema's).
func jsonFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			out[name] = t.Field(i)
		}
	}
	return out
}

// topLevelFields is the set of fields a workload or profile may have.
func topLevelFields(kind string) map[string]bool {
	t := reflect.TypeOf(schema.Profile{})
	if kind == "workloads" {
		t = reflect.TypeOf(schema.Workload{})
	}
	out := map[string]bool{}
	for name := range jsonFields(t) {
		out[name] = true
	}
	return out
}

// fillScalars unifies def with the concrete scalars the user set at path.
func (l *loader) fillScalars(def cue.Value, path []cue.Selector) cue.Value {
	user := l.pkg.LookupPath(cue.MakePath(path...))
	for _, f := range []string{"runtime", "dataset", "plugin"} {
		v := user.LookupPath(cue.ParsePath(f))
		if v.Exists() && v.IsConcrete() && v.Kind() == cue.StringKind && def.Allows(cue.Str(f)) {
			if filled := def.FillPath(cue.ParsePath(f), v); filled.Err() == nil {
				def = filled
			}
		}
	}
	return def
}

func isPrefix(p, of []cue.Selector) bool {
	if len(p) > len(of) {
		return false
	}
	for i := range p {
		if p[i].String() != of[i].String() {
			return false
		}
	}
	return true
}
