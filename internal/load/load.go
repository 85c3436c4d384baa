// Package load is wlc's one loader: it reads a workloads package with the
// embedded schema overlaid, validates it completely (every error at once,
// each with a position), and decodes workloads, profiles and the hardware
// catalog into the Go mirror types. It is the only package that imports
// cuelang.org/go/cue/load.
package load

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/load"
	"cuelang.org/go/cue/token"

	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/recipes"
	"github.com/wlcdev/wlc/internal/suggest"
	"github.com/wlcdev/wlc/internal/vllmflags"
	"github.com/wlcdev/wlc/schema"
)

// Workload is a decoded, fully validated workload and where it was defined.
type Workload struct {
	schema.Workload
	// File is the defining file, relative to the module root (slash form).
	File   string
	Line   int
	Column int
	// Recipe is set when the server was derived from a vLLM recipe.
	Recipe *plan.RecipeOrigin
}

// Result is everything one load produced. Diags holds every finding; when
// it has errors, Workloads holds only the workloads that decoded cleanly.
type Result struct {
	ModuleRoot    string
	Workloads     []Workload
	Profiles      map[string]schema.Profile
	Hardware      map[string]schema.Hardware
	Architectures map[string]schema.ArchitectureFacts
	Diags         diag.List
}

// Workload returns the workload called name.
func (r *Result) Workload(name string) (Workload, bool) {
	for _, w := range r.Workloads {
		if w.Name == name {
			return w, true
		}
	}
	return Workload{}, false
}

// Paths of the top-level fields a workloads package defines.
var (
	pathWorkloads     = cue.ParsePath("workloads")
	pathProfiles      = cue.ParsePath("profiles")
	pathHardware      = cue.ParsePath("hardware")
	pathArchitectures = cue.ParsePath("architectures")
)

// Options are optional inputs of a load.
type Options struct {
	// VLLMFlags, when set, checks every serve and bench flag against the
	// flags of one vLLM version.
	// A workload pinning an image is checked against that release's
	// catalog when the set has it.
	VLLMFlags *vllmflags.Set
	// RecipesDir is the vLLM recipes checkout that workloads with a
	// `recipe` derive from (see recipe_refs.go); it is read only when a
	// workload has one.
	RecipesDir string
}

// Load reads the workloads package in dir (a directory, as the user typed
// it, e.g. "workloads/"). cwd makes positions relative for printing.
func Load(ctx *cue.Context, dir, cwd string, opts ...Options) *Result {
	r := &Result{}
	l := &loader{ctx: ctx, cwd: cwd, res: r}
	if len(opts) > 0 {
		l.opts = opts[0]
	}
	l.run(dir)
	r.Diags = plainMismatches(collapseDisjunctions(r.Diags), cwd).Sorted()
	return r
}

type loader struct {
	opts Options
	ctx  *cue.Context
	cwd  string
	res  *Result
	// schemaDir is <module>/schema: positions there are the schema's, not
	// the user's, and are replaced by the blamed user field's position.
	schemaDir string
	// files are the user's parsed files, walked to find every error once
	// CUE's own validation stops at the first failing struct.
	files []*ast.File
	pkg   cue.Value
	// defs are the schema definitions of workloads and profiles, asked
	// which fields they allow (an erroneous struct allows anything).
	defWorkload, defProfile cue.Value
	// seen dedupes errors reported more than once.
	seen map[string]bool
	// recipes is the recipes checkout, loaded on first use.
	recipes    *recipes.Set
	recipesErr error
}

func (l *loader) errorf(format string, args ...any) {
	l.res.Diags.Errorf("", 0, 0, "", format, args...)
}

func (l *loader) run(dir string) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		l.errorf("cannot resolve %s: %v", dir, err)
		return
	}
	fi, err := os.Stat(abs)
	switch {
	case err != nil && os.IsNotExist(err):
		l.errorf("%s does not exist; give the directory holding your workloads package (e.g. workloads/)", dir)
		return
	case err != nil:
		l.errorf("cannot read %s: %v", dir, err)
		return
	case !fi.IsDir():
		l.errorf("%s is a file; give the directory of the workloads package (e.g. %s)", dir, filepath.Dir(dir)+string(filepath.Separator))
		return
	}
	cueFiles, _ := filepath.Glob(filepath.Join(abs, "*.cue"))
	if len(cueFiles) == 0 {
		l.errorf("%s holds no .cue files; add workload files (see README: \"Writing a workload\")", dir)
		return
	}
	root, ok := findModuleRoot(abs)
	if !ok {
		l.errorf("no cue.mod/module.cue found in %s or any parent; run wlc inside a wlc repository (cue.mod/ beside schema/ and workloads/)", dir)
		return
	}
	l.res.ModuleRoot = root
	// In wlc's own module the schema is its schema/ package; any other
	// module (a team's repository) imports it from cue.mod/gen, where CUE
	// finds packages of modules it does not fetch.
	schemaArg := "./schema"
	l.schemaDir = filepath.Join(root, "schema")
	if mod := modulePath(root); mod != "" && mod != schema.ModulePath && mod+"@v0" != schema.ModulePath {
		schemaArg = schema.ImportPath
		l.schemaDir = filepath.Join(root, "cue.mod", "gen", filepath.FromSlash(schema.ImportPath))
	}

	overlay, err := l.schemaOverlay()
	if err != nil {
		l.errorf("embedded schema: %v", err)
		return
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || strings.HasPrefix(rel, "..") {
		l.errorf("%s is outside the module rooted at %s", dir, root)
		return
	}
	cfg := &load.Config{Dir: root, ModuleRoot: root, Overlay: overlay}
	insts := load.Instances([]string{"./" + filepath.ToSlash(rel), schemaArg}, cfg)
	for _, inst := range insts {
		if inst.Err != nil {
			l.addCUEError(inst.Err, cue.Value{})
			return
		}
	}
	vals, err := l.ctx.BuildInstances(insts)
	if err != nil {
		l.addCUEError(err, cue.Value{})
		return
	}
	pkg, sch := vals[0], vals[1]
	for _, f := range insts[0].IgnoredFiles {
		// A file without a package clause is silently left out by CUE.
		if filepath.Dir(f.Filename) == abs && f.ExcludeReason != nil && strings.Contains(f.ExcludeReason.Error(), "no package name") {
			l.res.Diags.Warnf(l.rel(f.Filename), 1, 1, "", "has no package clause, so it is not part of the package and wlc ignores it; start it with `package %s`", insts[0].PkgName)
		}
	}
	l.pkg, l.files = pkg, insts[0].Files
	l.defWorkload = sch.LookupPath(cue.ParsePath("#Workload"))
	l.defProfile = sch.LookupPath(cue.ParsePath("#Profile"))
	l.decodeCatalog(sch)

	if !pkg.LookupPath(pathWorkloads).Exists() {
		l.errorf("%s defines no workloads: add `workloads: <name>: {...}` (and wlc.cue with the schema import, see README)", dir)
		return
	}
	l.decodeProfiles(pkg)
	l.decodeWorkloads(pkg)
}

var moduleField = regexp.MustCompile(`(?m)^\s*module:\s*"([^"]+)"`)

// modulePath reads the module path declared in <root>/cue.mod/module.cue.
func modulePath(root string) string {
	data, err := os.ReadFile(filepath.Join(root, "cue.mod", "module.cue"))
	if err != nil {
		return ""
	}
	if m := moduleField.FindSubmatch(data); m != nil {
		return string(m[1])
	}
	return ""
}

func findModuleRoot(dir string) (string, bool) {
	for d := dir; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(filepath.Join(d, "cue.mod", "module.cue")); err == nil && !fi.IsDir() {
			return d, true
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}

// schemaOverlay places the embedded schema at <module>/schema so the
// workloads always meet the schema this binary was built with. A differing
// on-disk copy gets a warning, since wlc ignores it.
func (l *loader) schemaOverlay() (map[string]load.Source, error) {
	overlay := map[string]load.Source{}
	err := fs.WalkDir(schema.Files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := schema.Files.ReadFile(p)
		if err != nil {
			return err
		}
		target := filepath.Join(l.schemaDir, filepath.FromSlash(p))
		if disk, err := os.ReadFile(target); err == nil && !bytes.Equal(disk, data) {
			l.res.Diags.Warnf(l.rel(target), 0, 0, "", "differs from the schema built into wlc, which is used instead; rebuild wlc (go install ./cmd/wlc) to use the edited schema")
		}
		overlay[target] = load.FromBytes(data)
		return nil
	})
	return overlay, err
}

func (l *loader) rel(file string) string {
	if file == "" {
		return ""
	}
	if l.cwd != "" {
		if r, err := filepath.Rel(l.cwd, file); err == nil && !strings.HasPrefix(r, "..") {
			return filepath.ToSlash(r)
		}
	}
	return filepath.ToSlash(file)
}

func (l *loader) isSchema(file string) bool {
	return file == "" || strings.HasPrefix(file, l.schemaDir+string(filepath.Separator))
}

func (l *loader) decodeCatalog(sch cue.Value) {
	r := l.res
	if err := sch.LookupPath(pathHardware).Decode(&r.Hardware); err != nil {
		l.addCUEError(err, sch)
	}
	if err := sch.LookupPath(pathArchitectures).Decode(&r.Architectures); err != nil {
		l.addCUEError(err, sch)
	}
}

func (l *loader) decodeProfiles(pkg cue.Value) {
	l.res.Profiles = map[string]schema.Profile{}
	v := pkg.LookupPath(pathProfiles)
	it, err := v.Fields()
	if err != nil {
		l.addCUEError(err, pkg)
		return
	}
	for it.Next() {
		pv := it.Value()
		if !l.validate(pv, pkg) {
			continue
		}
		var p schema.Profile
		if err := pv.Decode(&p); err != nil {
			l.addCUEError(err, pkg)
			continue
		}
		l.res.Profiles[p.Name] = p
		l.checkProfile(pv, p)
	}
}

func (l *loader) decodeWorkloads(pkg cue.Value) {
	it, err := pkg.LookupPath(pathWorkloads).Fields()
	if err != nil {
		l.addCUEError(err, pkg)
		return
	}
	// Collect in source order (recipe derivation reports findings),
	// validate and decode every workload in parallel (cue.Values are
	// immutable and safe for concurrent use since CUE v0.17), then report
	// and check in order, so output is the same as a sequential run.
	type job struct {
		wv, pkg cue.Value
		rd      *recipeDerivation
		err     error // Validate's
		w       schema.Workload
		decErr  error
	}
	var jobs []*job
	for it.Next() {
		wv := it.Value()
		rd, ok := l.deriveRecipe(wv)
		if !ok {
			continue
		}
		p := pkg
		if rd != nil {
			p, wv = l.pkg, rd.wv
		}
		jobs = append(jobs, &job{wv: wv, pkg: p, rd: rd})
	}
	parallel(len(jobs), func(i int) {
		j := jobs[i]
		if j.err = j.wv.Validate(cue.Concrete(true), cue.Final()); j.err == nil {
			j.decErr = j.wv.Decode(&j.w)
		}
	})
	for _, j := range jobs {
		wv := j.wv
		before := len(l.res.Diags)
		if j.err != nil {
			l.reportInvalid(wv, j.pkg, j.err)
			j.rd.blameDerived(l, before)
			// The field rules read single fields: decode those that
			// are sound, so their errors come in the same run.
			sels := wv.Path().Selectors()
			if len(sels) == 2 && sels[1].IsString() {
				lw := Workload{Workload: schema.Workload{Name: sels[1].Unquoted()}}
				for p, dst := range map[string]any{"profile": &lw.Profile, "env": &lw.Env, "secrets": &lw.Secrets, "serve.extra_args": &lw.Serve.ExtraArgs} {
					if fv := wv.LookupPath(cue.ParsePath(p)); fv.Validate(cue.Concrete(true)) == nil {
						_ = fv.Decode(dst)
					}
				}
				j.rd.apply(&lw)
				l.checkFields(wv, &lw)
			}
			continue
		}
		if j.decErr != nil {
			l.addCUEError(j.decErr, j.pkg)
			continue
		}
		lw := Workload{Workload: j.w}
		j.rd.apply(&lw)
		pos := l.userPos(wv.LookupPath(cue.ParsePath("profile")))
		if pos.IsValid() {
			// Relative to the module root, not the working directory:
			// generated files name it, and must not depend on where wlc ran.
			lw.File = filepath.ToSlash(pos.Filename())
			if rel, err := filepath.Rel(l.res.ModuleRoot, pos.Filename()); err == nil {
				lw.File = filepath.ToSlash(rel)
			}
			lw.Line, lw.Column = pos.Line(), pos.Column()
		}
		if l.checkWorkload(wv, &lw) {
			l.res.Workloads = append(l.res.Workloads, lw)
		}
	}
	sort.Slice(l.res.Workloads, func(i, j int) bool { return l.res.Workloads[i].Name < l.res.Workloads[j].Name })
}

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

// parallel runs f(0..n-1) on up to GOMAXPROCS goroutines.
func parallel(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Go(func() {
			for i := range next {
				f(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// reportInvalid reports why v failed validation with err.
func (l *loader) reportInvalid(v, pkg cue.Value, err error) {
	before := len(l.res.Diags)
	l.addCUEError(err, pkg)
	defer func() {
		// Never drop a workload or profile silently: if every error was
		// filtered as a repeat, report CUE's first one as it is.
		// Errors inside a workload's copy of its profile were reported on
		// the profile.
		if len(l.res.Diags) > before {
			return
		}
		for _, e := range cueerrors.Errors(err) {
			if indexOf(e.Path(), "#profiles") >= 0 || indexOf(e.Path(), "_profile") >= 0 {
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
	var def cue.Value
	switch path[0].String() {
	case "workloads":
		def = l.defWorkload
	case "profiles":
		def = l.defProfile
	default:
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
		if !l.labelPos(append(append([]cue.Selector(nil), path...), cue.Str(name))).IsValid() {
			l.addCUEError(cueerrors.Newf(token.NoPos, "required field missing: %s", name), pkg, v.Path())
		}
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
					why := notAllowed(path, name)
					if s := suggest.Closest(l.fieldNames(path), name); s != "" && strings.HasSuffix(why, "(wlc show prints a resolved workload)") {
						why = fmt.Sprintf("%s is not a field here; did you mean %s?", name, s)
					}
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
	if len(path) < 2 {
		return true
	}
	var def cue.Value
	switch path[0].String() {
	case "workloads":
		def = l.defWorkload
	case "profiles":
		def = l.defProfile
	default:
		return true
	}
	if len(path) == 2 {
		// #Workload and #Profile hold comprehensions, and CUE allows any
		// field on a struct whose comprehensions are pending; their field
		// sets are the Go mirror types' (kept equal by the drift test).
		return topLevelFields(path[0].String())[name]
	}
	for _, sel := range path[2:] {
		if !def.Exists() {
			return true
		}
		def = l.fillScalars(def, nil)
		var next cue.Value
		if sel.Type() == cue.IndexLabel {
			next = def.LookupPath(cue.MakePath(cue.AnyIndex))
		} else {
			for _, try := range []cue.Selector{sel, sel.Optional(), cue.AnyString} {
				if next = def.LookupPath(cue.MakePath(try)); next.Exists() {
					break
				}
			}
		}
		def = next
	}
	if !def.Exists() || def.IncompleteKind() != cue.StructKind {
		return true
	}
	def = l.fillScalars(def, path)
	return def.Allows(cue.Str(name))
}

// fieldNames lists the fields the schema allows under path, for
// suggesting the one a misspelt label meant.
func (l *loader) fieldNames(path []cue.Selector) []string {
	if len(path) < 2 {
		return nil
	}
	if len(path) == 2 {
		return sortedKeys(topLevelFields(path[0].String()))
	}
	def := l.defWorkload
	if path[0].String() == "profiles" {
		def = l.defProfile
	}
	for _, sel := range path[2:] {
		if sel.Type() == cue.IndexLabel {
			def = def.LookupPath(cue.MakePath(cue.AnyIndex))
		} else if next := def.LookupPath(cue.MakePath(sel)); next.Exists() {
			def = next
		} else {
			def = def.LookupPath(cue.MakePath(sel.Optional()))
		}
		if !def.Exists() {
			return nil
		}
	}
	var names []string
	it, err := l.fillScalars(def, path).Fields(cue.Optional(true))
	if err != nil {
		return nil
	}
	for it.Next() {
		names = append(names, it.Selector().Unquoted())
	}
	return names
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
	if len(path) == 0 || !path[0].IsString() {
		return token.NoPos
	}
	for _, d := range decls {
		var p token.Pos
		switch x := d.(type) {
		case *ast.Field:
			name, _, err := ast.LabelName(x.Label)
			if err != nil || name != path[0].Unquoted() {
				continue
			}
			if len(path) == 1 {
				return x.Label.Pos()
			}
			p = findLabelExpr(x.Value, path[1:])
		case *ast.EmbedDecl:
			p = findLabelExpr(x.Expr, path)
		}
		if p.IsValid() {
			return p
		}
	}
	return token.NoPos
}

func findLabelExpr(e ast.Expr, path []cue.Selector) token.Pos {
	switch x := e.(type) {
	case *ast.StructLit:
		return findLabel(x.Elts, path)
	case *ast.BinaryExpr:
		if x.Op == token.AND {
			if p := findLabelExpr(x.X, path); p.IsValid() {
				return p
			}
			return findLabelExpr(x.Y, path)
		}
	case *ast.ParenExpr:
		return findLabelExpr(x.X, path)
	}
	return token.NoPos
}

func topLevelFields(kind string) map[string]bool {
	var t reflect.Type
	if kind == "workloads" {
		t = reflect.TypeOf(schema.Workload{})
	} else {
		t = reflect.TypeOf(schema.Profile{})
	}
	out := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out[name] = true
	}
	return out
}

// fillScalars unifies def with the concrete scalars the user set at path.
func (l *loader) fillScalars(def cue.Value, path []cue.Selector) cue.Value {
	if path == nil {
		return def
	}
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

// userPos returns the position of v in a user file, looking through the
// conjuncts CUE unified into v; it is invalid when only the schema defines
// v.
func (l *loader) userPos(v cue.Value) token.Pos {
	if !v.Exists() {
		return token.NoPos
	}
	if p := v.Pos(); p.IsValid() && !l.isSchema(p.Filename()) {
		return p
	}
	for _, c := range conjuncts(v) {
		if p := c.Pos(); p.IsValid() && !l.isSchema(p.Filename()) {
			return p
		}
	}
	return token.NoPos
}

func conjuncts(v cue.Value) []cue.Value {
	op, args := v.Expr()
	if op != cue.AndOp {
		return nil
	}
	var out []cue.Value
	for _, a := range args {
		out = append(out, a)
		out = append(out, conjuncts(a)...)
	}
	return out
}

// addCUEError converts a CUE error (list) into diagnostics, each at the
// most useful user position: the user's own value when CUE names it, else
// the workload field a schema rule blames (see _check in the schema).
func (l *loader) addCUEError(err error, pkg cue.Value, at ...cue.Path) {
	if l.seen == nil {
		l.seen = map[string]bool{}
	}
	for _, e := range cueerrors.Errors(err) {
		// e.Path() quotes labels that are not identifiers ("-w").
		var path []string
		for _, el := range e.Path() {
			if u, err := strconv.Unquote(el); err == nil && strings.HasPrefix(el, "\"") {
				el = u
			}
			path = append(path, el)
		}
		if len(at) > 0 {
			path = nil
			for _, s := range at[0].Selectors() {
				path = append(path, selLabel(s))
			}
		}
		format, args := e.Msg()
		msg := fmt.Sprintf(format, args...)
		// A missing field does not exist: blame the struct that lacks it,
		// in the words used for top-level fields.
		if msg == "field is required but not present" && len(path) > 1 {
			msg = "required field missing: " + path[len(path)-1]
			path = path[:len(path)-1]
		}
		// Two keys per error, kept apart by their prefix: the raw error
		// (path + CUE text) and the finding (shown path + message). For a
		// path-less error such as a syntax error they were equal, and the
		// finding was dropped as its own duplicate.
		rawKey := "raw\x00" + strings.Join(path, "\x00") + "\x00" + e.Error()
		if l.seen[rawKey] {
			continue
		}
		l.seen[rawKey] = true
		// A workload's copy of its profile (#profiles, _profile) repeats
		// the errors reported on profiles.<name> itself.
		if indexOf(path, "#profiles") >= 0 || indexOf(path, "_profile") >= 0 {
			continue
		}
		// An error on a let (the schema's arithmetic helpers) repeats an
		// error already reported on the field it reads.
		if l.pkg.Exists() && len(path) > 1 && indexOf(path, "_check") < 0 && !strings.HasPrefix(path[0], "#") {
			if p := cue.ParsePath(cuePath(path)); p.Err() == nil && !l.pkg.LookupPath(p).Exists() {
				continue
			}
		}
		msg = strings.TrimSuffix(msg, ":")
		var pos token.Pos
		for _, p := range cueerrors.Positions(e) {
			if !l.isSchema(p.Filename()) && !isTyping(p.Filename()) {
				pos = p
				break
			}
		}
		shown := path
		if i := indexOf(path, "_check"); i >= 0 && i+1 < len(path) {
			// _check.<blame>.<rule>: report against <prefix>.<blame>.
			prefix := path[:i]
			blame := path[i+1]
			shown = append(append([]string(nil), prefix...), splitBlame(blame)...)
			if !pos.IsValid() && pkg.Exists() {
				pos = l.blamePos(pkg, shown)
			}
		}
		if !pos.IsValid() && pkg.Exists() && len(path) > 0 {
			pos = l.blamePos(pkg, path)
		}
		if !pos.IsValid() {
			for _, p := range cueerrors.Positions(e) {
				pos = p
				break
			}
		}
		d := diag.Diagnostic{Severity: diag.Error, Path: cuePath(shown), Message: cleanMessage(msg)}
		if key := "diag\x00" + d.Path + "\x00" + d.Message; l.seen[key] {
			continue
		} else {
			l.seen[key] = true
		}
		if pos.IsValid() {
			d.File, d.Line, d.Column = l.rel(pos.Filename()), pos.Line(), pos.Column()
		}
		l.res.Diags.Add(d)
	}
}

// blamePos finds the nearest user-written value on path, walking up to the
// enclosing struct when the field itself only has a schema default.
func (l *loader) blamePos(pkg cue.Value, path []string) token.Pos {
	for n := len(path); n > 0; n-- {
		p := cue.ParsePath(cuePath(path[:n]))
		if p.Err() != nil {
			continue
		}
		v := pkg.LookupPath(p)
		if pos := l.userPos(v); pos.IsValid() && !isTyping(pos.Filename()) {
			return pos
		}
		// A struct the user wrote: its label (workloads.w is typed by the
		// pattern in wlc.cue, which says nothing about w).
		if pos := l.labelPos(p.Selectors()); pos.IsValid() {
			return pos
		}
		// A workload struct's own position is the pattern in wlc.cue; its
		// required profile field is in the user's file.
		if n == 2 && path[0] == "workloads" {
			if pos := l.userPos(v.LookupPath(cue.ParsePath("profile"))); pos.IsValid() {
				return pos
			}
		}
	}
	return token.NoPos
}

// isTyping reports whether file is a package's wlc.cue, the two lines
// typing every profile and workload: never the place a user should fix.
func isTyping(file string) bool {
	return filepath.Base(file) == "wlc.cue"
}

func indexOf(path []string, s string) int {
	for i, p := range path {
		if p == s {
			return i
		}
	}
	return -1
}

// splitBlame turns a blame string such as `serve.kv_cache_dtype` or
// `args."num_prompts"` into path elements.
func splitBlame(b string) []string {
	if b == "" || b == `""` {
		return nil
	}
	if u, err := strconv.Unquote(b); err == nil {
		b = u
	}
	p := cue.ParsePath(b)
	if p.Err() != nil {
		return []string{b}
	}
	var out []string
	for _, s := range p.Selectors() {
		out = append(out, selLabel(s))
	}
	return out
}

// selLabel is a selector as a path element: the unquoted name, or the
// index of a list element (Unquoted panics on those).
func selLabel(s cue.Selector) string {
	switch {
	case s.IsString():
		return s.Unquoted()
	case s.LabelType() == cue.IndexLabel && !s.IsConstraint():
		return strconv.Itoa(s.Index())
	}
	return s.String()
}

func cuePath(elems []string) string {
	var b strings.Builder
	for i, e := range elems {
		if isIndex(e) {
			b.WriteString("[" + e + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		if isIdent(e) {
			b.WriteString(e)
		} else {
			fmt.Fprintf(&b, "%q", e)
		}
	}
	return b.String()
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == '_' || r == '$' || r == '#' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9') {
			continue
		}
		return false
	}
	return true
}

// cleanMessage drops CUE internals (package-qualified hidden names) that
// mean nothing to a workload author.
func cleanMessage(m string) string {
	return strings.ReplaceAll(m, "(github.com/wlcdev/wlc/schema)", "")
}

// collapseDisjunctions keeps one line per wrongly typed value: CUE reports
// "N errors in empty disjunction" plus one conflict per alternative of a
// defaulted field (*1 | int), which says the same thing N+1 times.
func collapseDisjunctions(in diag.List) diag.List {
	conflict := map[string]bool{}
	for _, d := range in {
		if strings.HasPrefix(d.Message, "conflicting values") {
			conflict[d.Path] = true
		}
	}
	// The walker's "field not allowed: <why>" says more than CUE's bare
	// "field not allowed" on the same field. Any other error on a path
	// says more than "conflicting values" (which, beside a bound or a
	// schema message, is only the schema default disagreeing).
	explained := map[string]bool{}
	specific := map[string]bool{}
	for _, d := range in {
		if strings.HasPrefix(d.Message, "field not allowed: ") {
			explained[d.Path] = true
		}
		if !strings.HasPrefix(d.Message, "conflicting values") && !strings.Contains(d.Message, "errors in empty disjunction") {
			specific[d.Path] = true
		}
	}
	var out diag.List
	typeSeen := map[string]bool{}
	for _, d := range in {
		if conflict[d.Path] && strings.Contains(d.Message, "errors in empty disjunction") {
			continue
		}
		if explained[d.Path] && d.Message == "field not allowed" {
			continue
		}
		if specific[d.Path] && strings.HasPrefix(d.Message, "conflicting values") {
			continue
		}
		if i := strings.Index(d.Message, "(mismatched types"); i >= 0 {
			key := d.Path + d.Message[i:]
			if typeSeen[key] {
				continue
			}
			typeSeen[key] = true
		}
		out = append(out, d)
	}
	return out
}

var mismatch = regexp.MustCompile(`^conflicting values (.+) and (.+) \(mismatched types (\w+) and (\w+)\)$`)

var kindNames = map[string]string{
	"int": "an integer", "float": "a number", "number": "a number", "string": "a string",
	"bool": "a bool (true or false)", "bytes": "bytes", "null": "null", "struct": "a struct", "list": "a list",
}

// plainMismatches says "must be an integer, not the string "8"" where CUE
// says "conflicting values "8" and int (mismatched types string and int)".
// Which operand is the user's is read from the source at the finding's
// position when neither operand is a bare type.
func plainMismatches(in diag.List, cwd string) diag.List {
	out := make(diag.List, len(in))
	for i, d := range in {
		out[i] = d
		m := mismatch.FindStringSubmatch(d.Message)
		if m == nil {
			continue
		}
		got, gotKind, want := "", "", ""
		switch {
		case kindNames[m[2]] != "":
			got, gotKind, want = m[1], m[3], m[4]
		case kindNames[m[1]] != "":
			got, gotKind, want = m[2], m[4], m[3]
		case sourceAt(cwd, d) != "" && strings.HasPrefix(sourceAt(cwd, d), m[1]):
			got, gotKind, want = m[1], m[3], m[4]
		case sourceAt(cwd, d) != "" && strings.HasPrefix(sourceAt(cwd, d), m[2]):
			got, gotKind, want = m[2], m[4], m[3]
		default:
			continue
		}
		if kindNames[want] == "" {
			continue
		}
		out[i].Message = fmt.Sprintf("must be %s, not the %s %s", kindNames[want], gotKind, got)
	}
	return out
}

// sourceAt is the rest of the line at d's position.
func sourceAt(cwd string, d diag.Diagnostic) string {
	if d.File == "" || d.Line < 1 || d.Column < 1 {
		return ""
	}
	p := d.File
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	lines := strings.Split(string(data), "\n")
	if d.Line > len(lines) {
		return ""
	}
	line := []rune(lines[d.Line-1])
	// CUE columns count bytes.
	b := []byte(string(line))
	if d.Column-1 > len(b) {
		return ""
	}
	return string(b[d.Column-1:])
}
