// Package load is wlc's one loader: it reads a workloads package with the
// embedded schema overlaid, validates it completely (every error at once,
// each with a position), and decodes workloads, profiles and the hardware
// catalog into the Go mirror types. The Go rules over the decoded values
// are internal/check's and the backends' (Vetter); the loader places their
// findings at the user's file:line:col. It is the only package that
// imports cuelang.org/go/cue/load.
package load

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/literal"
	"cuelang.org/go/cue/load"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"

	"github.com/wlcdev/wlc/internal/bounded"
	"github.com/wlcdev/wlc/internal/check"
	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/internal/engine/vllmflags"
	"github.com/wlcdev/wlc/internal/load/budget"
	"github.com/wlcdev/wlc/internal/load/cuedecode"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/recipes"
	"github.com/wlcdev/wlc/internal/results/ingest"
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
	ModuleRoot string
	// Workloads are the clean workloads, sorted by name.
	Workloads     []Workload
	Profiles      map[string]schema.Profile
	Hardware      map[string]schema.Hardware
	Architectures map[string]schema.ArchitectureFacts
	// Settings are the package's settings (schema #Settings), if any.
	Settings *schema.Settings
	Diags    diag.List
	// shards is how many shards the workloads were evaluated in (0: the
	// package as one; see shard.go).
	shards int
	// engineBlocks are the workload blocks #OnEngine types by the engine
	// (sglang, vllm_bench, …), read from the schema for dropEngineCascade.
	engineBlocks []string
	// refused are the workloads with errors, as far as they decode: the
	// rules across workloads still see them.
	refused []Workload
	// rows describes the row shapes from the schema package this load
	// built (see ingestShapes).
	rows *rowShapes
}

type rowShapes struct {
	schema cue.Value
	once   sync.Once
	shapes string
	err    error
}

// Workload returns the workload called name (a binary search: Load
// leaves Workloads sorted by name, see finishWorkloads).
func (r *Result) Workload(name string) (Workload, bool) {
	i, ok := slices.BinarySearchFunc(r.Workloads, name, func(w Workload, name string) int { return strings.Compare(w.Name, name) })
	if !ok {
		return Workload{}, false
	}
	return r.Workloads[i], true
}

// pathOf is cue.ParsePath(s), parsed once: ParsePath runs the CUE parser,
// and the loader looks the same few paths up in every workload (its
// profile, its run name's field, its configs' args), a percent of a cold
// vet's CPU when each lookup parsed its path again.
func pathOf(s string) cue.Path {
	if p, ok := parsedPaths.Load(s); ok {
		return p.(cue.Path)
	}
	p := cue.ParsePath(s)
	parsedPaths.Store(s, p)
	return p
}

var parsedPaths sync.Map // string → cue.Path

// Paths of the top-level fields a workloads package defines.
var (
	pathWorkloads     = cue.ParsePath("workloads")
	pathProfiles      = cue.ParsePath("profiles")
	pathHardware      = cue.ParsePath("hardware")
	pathArchitectures = cue.ParsePath("architectures")
)

// Options are optional inputs of a load.
type Options struct {
	// VLLMFlags are the vLLM flag catalogs every serve and bench option
	// is checked against, the catalog of the image the workload runs
	// (see vllmflags.Set.For); nil means the built-in ones, plus the
	// package's settings.vllm_flags.
	VLLMFlags *vllmflags.Set
	// Overrides are the export-time image overrides (VLLM_IMAGE, …):
	// they decide the image, hence the catalog.
	Overrides plan.Overrides
	// RecipesDir is the vLLM recipes checkout that workloads with a
	// `recipe` derive from (see recipe_refs.go); it is read only when a
	// workload has one. RecipesFrom says where it came from ("--recipes",
	// "$WLC_RECIPES"; RecipesDefault for a guessed default, which the
	// package's settings.recipes overrides).
	RecipesDir, RecipesFrom string
	// Vetters are the backends' vet-time rules (see Vetter).
	Vetters []Vetter
	// settingsOnly stops the load after the package's settings.
	settingsOnly bool
	// shardFiles is the most workload files one shard holds (see
	// shard.go): 0 means the default, a negative number never shards.
	shardFiles int
	// evaluateOnly stops each shard once CUE has evaluated it: its
	// workloads are neither validated, decoded nor checked. Only
	// BenchmarkEvaluationFloor sets it, to measure what a load costs
	// beyond CUE's evaluation (the bound of issue 14's vet ratio).
	evaluateOnly bool
	// Progress, when set, is told what is being evaluated (for the
	// budget's error: CUE's evaluation cannot be interrupted).
	Progress *budget.Progress
	// without are workload files loaded as their package clause alone
	// (Load sets it from a run that found them, see broken.go).
	without *brokenFiles
}

// Load reads the workloads package in dir (a directory, as the user typed
// it, e.g. "workloads/"). cwd makes positions relative for printing.
func Load(ctx *cue.Context, dir, cwd string, opts ...Options) *Result {
	r := &Result{}
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	shardFiles := o.shardFiles
	var l *loader
	for {
		*r = Result{}
		l = &loader{ctx: ctx, cwd: cwd, res: r, opts: o}
		l.run(dir)
		switch {
		case l.broken != nil:
			// Workload files CUE could not read or build: load the
			// package again without them (see broken.go). Each time
			// leaves out more files, never one already left out (it is
			// a package clause now).
			o.without, o.shardFiles = l.broken, shardFiles
			continue
		case l.unsharded && o.shardFiles >= 0:
			// A shard did not build: load the package as one.
			o.shardFiles = -1
			continue
		}
		break
	}
	src := newSources(cwd)
	diags := plainMismatches(dropEngineCascade(collapseDisjunctions(r.Diags, src), r.engineBlocks), src, l.structElem, l.accepts)
	diags = dropLookupCascade(diags, src)
	for i := range diags {
		for _, hint := range hints {
			diags[i].Message = hint(diags[i], src)
		}
		diags[i].Message = l.requiredDoc(diags[i])
	}
	r.Diags = syntaxHints(diags.Sorted(), src)
	return r
}

type loader struct {
	opts Options
	// module is the module file's path and language version (useModule).
	module moduleFile
	ctx    *cue.Context
	cwd    string
	res    *Result
	// schemaDir is <module>/schema: positions there are the schema's, not
	// the user's, and are replaced by the blamed user field's position.
	schemaDir string
	// files are the user's parsed files, walked to find every error once
	// CUE's own validation stops at the first failing struct.
	files []*ast.File
	pkg   cue.Value
	// inst is the instance pkg was built from (revealHidden builds it
	// again); nil where pkg is not the user's package. In a shard, shared
	// are the files every shard holds.
	inst   *build.Instance
	shared []*ast.File
	// schemaInst is the schema package, built into defs on first use.
	schemaInst *build.Instance
	// defs are the schema's definitions; nil until defs() builds them.
	defsBuilt *schemaDefs
	// seen dedupes errors reported more than once.
	seen map[string]bool
	// unsharded says the sharded load failed (a shard did not build): the
	// package must be loaded as one.
	unsharded bool
	// broken are workload files CUE could not read or build: the package
	// must be loaded without them.
	broken *brokenFiles
	// recipes is the recipes checkout, loaded on first use.
	recipes    *recipes.Set
	recipesErr error
}

// schemaDefs are the schema definitions the loader reads: #Workload and
// #Profile, asked which fields they allow (an erroneous struct allows
// anything), and #Settings, which types the package's settings.
type schemaDefs struct {
	schema, workload, profile, settings cue.Value
}

func newSchemaDefs(sch cue.Value) *schemaDefs {
	return &schemaDefs{
		schema:   sch,
		workload: sch.LookupPath(cue.ParsePath("#Workload")),
		profile:  sch.LookupPath(cue.ParsePath("#Profile")),
		settings: sch.LookupPath(cue.ParsePath("#Settings")),
	}
}

// defs are the schema's definitions in the loader's context. A shard
// builds them only when it reports an error: evaluating the whole schema
// package costs about as much as a shard's shared files, and a clean
// shard never reads it (its workloads reach only the definitions they use).
func (l *loader) defs() *schemaDefs {
	if l.defsBuilt == nil {
		sch := l.ctx.BuildInstance(l.schemaInst)
		l.defsBuilt = newSchemaDefs(sch)
	}
	return l.defsBuilt
}

// structElem is structElem on the schema, or nothing without one.
func (l *loader) structElem(def string) (string, bool) {
	if l.schemaInst == nil {
		return "", false
	}
	return structElem(l.defs().schema, def)
}

// accepts reports whether literal is a value the schema's type of the
// field at path (workloads.<name>.… or profiles.<name>.…) takes, so a
// suggested fix is never itself refused (1e6 for timeout_in_minutes is
// the integer 1000000, over its bound). It says yes when the type cannot
// be found or reads other fields.
func (l *loader) accepts(path, literal string) bool {
	typ, ok := l.schemaType(path, false)
	if !ok {
		return true
	}
	return typ.Unify(l.ctx.CompileString(literal)).Err() == nil
}

// firstSentence is text up to its first full stop ("e.g." and "i.e."
// are none).
func firstSentence(text string) string {
	for i := 0; ; {
		j := strings.Index(text[i:], ". ")
		if j < 0 {
			return text
		}
		end := i + j
		if !strings.HasSuffix(text[:end], "e.g") && !strings.HasSuffix(text[:end], "i.e") {
			return text[:end]
		}
		i = end + 2
	}
}

// schemaType is the schema's declaration of the field at path
// (workloads.<name>.… or profiles.<name>.…, a list index read as the
// list's element), where the definitions declare it: through regular
// fields only, or, when constraints is set, also through optional
// (vllm_bench?) and required (gpus_per_node!) ones and into the block an
// engine or a runtime types (sglang?, slurm?), read in its owner's
// definition.
func (l *loader) schemaType(path string, constraints bool) (cue.Value, bool) {
	if l.schemaInst == nil {
		return cue.Value{}, false
	}
	p := cue.ParsePath(path)
	if p.Err() != nil || len(p.Selectors()) < 3 {
		return cue.Value{}, false
	}
	sels := p.Selectors()
	var def cue.Value
	switch sels[0].String() {
	case "workloads":
		def = l.defs().workload
	case "profiles":
		def = l.defs().profile
	default:
		return cue.Value{}, false
	}
	typ := walkSchema(def, sels[2:], constraints)
	if !typ.Exists() && constraints && len(sels) > 3 {
		// A block an engine or a runtime types is, in the bare
		// definition, the refusal of the others: read it in its own
		// engine's or runtime's definition (#OnEngine[e].sglang).
		holder := map[string]string{"workloads": "#OnEngine", "profiles": "#OnRuntime"}[sels[0].String()]
		owners, err := l.defs().schema.LookupPath(cue.ParsePath(holder)).Fields()
		for err == nil && owners.Next() {
			block := owners.Value().LookupPath(cue.MakePath(sels[2]))
			if t := walkSchema(block, sels[3:], true); t.Exists() {
				return t, true
			}
		}
	}
	return typ, typ.Exists()
}

// walkSchema follows sels from typ: a list index as the list's element
// type; with constraints, a field the schema declares optional
// (vllm_bench?) or required (gpus_per_node!) too, which a plain selector
// does not find.
func walkSchema(typ cue.Value, sels []cue.Selector, constraints bool) cue.Value {
	for _, s := range sels {
		if s.Type() == cue.IndexLabel {
			typ = typ.LookupPath(cue.MakePath(cue.AnyIndex))
			continue
		}
		next := typ.LookupPath(cue.MakePath(s))
		for _, c := range []cue.Selector{s.Optional(), s.Required()} {
			if next.Exists() || !constraints {
				break
			}
			next = typ.LookupPath(cue.MakePath(c))
		}
		typ = next
	}
	return typ
}

// requiredDoc adds to "required field missing: F" what F is, in the
// first sentence of the schema's comment on it ("count is how many
// reserved GPUs the server leaves idle: ..."), so the fix needs no look
// into the schema.
func (l *loader) requiredDoc(d diag.Diagnostic) string {
	field, ok := strings.CutPrefix(d.Message, "required field missing: ")
	if !ok || d.Severity != diag.Error || strings.ContainsAny(field, " ;") {
		return d.Message
	}
	typ, ok := l.schemaType(d.Path+"."+field, true)
	if !ok {
		return d.Message
	}
	for _, cg := range typ.Doc() {
		text := strings.Join(strings.Fields(cg.Text()), " ")
		// The schema's comments on a field start with its name and say
		// what it is ("count is how many ...", "reason says why ...").
		if !strings.HasPrefix(text, field+" ") {
			continue
		}
		text = firstSentence(text)
		return fmt.Sprintf("%s; add it (%s)", d.Message, strings.TrimSuffix(text, "."))
	}
	return d.Message
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
		l.errorf("%s holds no .cue files; add workload files (see docs/schema.md: \"Writing a workload\")", dir)
		return
	}
	if !l.readable(cueFiles) {
		return
	}
	root, ok := findModuleRoot(abs)
	if !ok {
		l.errorf("no cue.mod/module.cue found in %s or any parent; run wlc inside a wlc repository (cue.mod/ beside schema/ and workloads/)", dir)
		return
	}
	l.res.ModuleRoot = root
	if !l.readable([]string{filepath.Join(root, "cue.mod", "module.cue")}) {
		return
	}
	schemaArg := l.useModule(root)

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
	l.opts.Progress.Set(dir, "the package in "+dir)
	args := []string{"./" + filepath.ToSlash(rel), schemaArg}
	if l.opts.without != nil {
		l.opts.without.overlay(overlay)
	}
	insts := load.Instances(args, &load.Config{Dir: root, ModuleRoot: root, Overlay: overlay})
	// A syntax error drops every file of the package.
	if err := insts[0].Err; err != nil && len(insts[0].Files) == 0 && l.dropBroken(err, abs, nil) {
		return
	}
	for _, inst := range insts {
		if inst.Err != nil {
			if !l.packageClash(inst.Err, abs) {
				l.addCUEError(inst.Err, cue.Value{})
			}
			return
		}
	}
	if w := l.opts.without; w != nil {
		l.addCUEError(w.err, cue.Value{})
		if !w.soundWithout(insts[0].Files) {
			return // the other files need what the broken ones hold
		}
	}
	// A package that shards is evaluated here without its workload
	// files (see shard.go); its workloads are evaluated shard by shard.
	shards := planShards(insts[0].Files, l.opts.shardSize())
	toBuild := insts
	if shards != nil {
		shared := *insts[0]
		shared.Files = shards.shared
		toBuild = []*build.Instance{&shared, insts[1]}
	}
	vals, err := l.ctx.BuildInstances(toBuild)
	if err != nil {
		if shards != nil {
			l.unsharded = true // the package reports why, as one
			return
		}
		if !l.dropBroken(err, abs, insts[0].Files) {
			l.addCUEError(err, cue.Value{})
		}
		return
	}
	pkg, sch := vals[0], vals[1]
	l.res.rows = &rowShapes{schema: sch}
	l.res.engineBlocks = engineBlocks(sch)
	for _, f := range insts[0].IgnoredFiles {
		// A file without a package clause is silently left out by CUE:
		// its workloads would vanish from the nightly set unnoticed.
		if filepath.Dir(f.Filename) == abs && f.ExcludeReason != nil && strings.Contains(f.ExcludeReason.Error(), "no package name") {
			l.res.Diags.Errorf(l.rel(f.Filename), 1, 1, "", "has no package clause, so CUE leaves it out of the package and nothing in it is vetted or exported; start it with `package %s` (or move it out of this directory)", insts[0].PkgName)
		}
	}
	l.warnNested(abs, insts[0].PkgName)
	l.pkg, l.files = pkg, insts[0].Files
	if shards == nil {
		l.inst = insts[0]
	}
	l.schemaInst, l.defsBuilt = insts[1], newSchemaDefs(sch)
	l.decodeCatalog(sch)

	l.checkTopLevel()
	// A shard plan found workload files, which the shared files lack.
	if shards == nil && !pkg.LookupPath(pathWorkloads).Exists() {
		l.errorf("%s defines no workloads: add `workloads: <name>: {...}` (and wlc.cue with the schema import, see docs/schema.md: \"Writing a workload\")", dir)
		return
	}
	if !l.typed(pkg, dir) {
		return
	}
	l.decodeSettings(pkg, abs)
	if l.opts.settingsOnly {
		return
	}
	l.decodeProfiles(pkg)
	if shards == nil {
		l.decodeWorkloads(pkg)
		l.checkDefinedTwice(workloadDefs(l.files))
		return
	}
	// The shards take the workload files; the package's own checks need
	// only where each workload is defined.
	defs := workloadDefs(l.files)
	l.files = shards.shared
	if !l.evalShards(insts[0], shards, abs) {
		l.unsharded = l.broken == nil
		return
	}
	l.checkDefinedTwice(defs)
}

// moduleRel is file relative to the module root, slash-separated: a
// workload's File, which generated files name, must not depend on where
// wlc ran.
func (l *loader) moduleRel(file string) string {
	if rel, err := filepath.Rel(l.res.ModuleRoot, file); err == nil {
		return filepath.ToSlash(rel)
	}
	return filepath.ToSlash(file)
}

// soundEntries are the entries of the struct v that are concrete and
// valid, decoded; those with an error (reported on their own) are left
// out, so the rules over the map still see the rest.
func soundEntries(v cue.Value) map[string]any {
	it, err := v.Fields()
	if err != nil {
		return nil
	}
	out := map[string]any{}
	for it.Next() {
		var x any
		if it.Value().Validate(cue.Concrete(true)) == nil && it.Value().Decode(&x) == nil {
			out[it.Selector().Unquoted()] = x
		}
	}
	return out
}

// soundStrings are soundEntries' strings.
func soundStrings(v cue.Value) map[string]string {
	var out map[string]string
	for k, x := range soundEntries(v) {
		if s, ok := x.(string); ok {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = s
		}
	}
	return out
}

// readable reports each of the package's .cue files (and its module's
// cue.mod/module.cue) cue/load could not read as a file, at the file: a symbolic link to nothing (cue/load says
// nothing but an empty error), a FIFO (cue/load would block on it), a
// device, a file over bounded.WorkloadFile (read whole). A directory
// named *.cue is not a file of the package, as for cue/load.
func (l *loader) readable(files []string) bool {
	ok := true
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			ok = false
			if target, lerr := os.Readlink(f); lerr == nil && os.IsNotExist(err) {
				l.res.Diags.Errorf(l.rel(f), 0, 0, "", "is a symbolic link to %s, which does not exist; restore the file it points to or remove the link", target)
			} else {
				var pe *fs.PathError
				if errors.As(err, &pe) {
					err = pe.Err // the path is the finding's
				}
				l.res.Diags.Errorf(l.rel(f), 0, 0, "", "cannot read it: %v", err)
			}
			continue
		}
		switch {
		case fi.IsDir():
		case !fi.Mode().IsRegular():
			ok = false
			l.res.Diags.Errorf(l.rel(f), 0, 0, "", "is %s, not a regular file; a workloads package holds .cue files only", fileKind(fi.Mode()))
		case fi.Size() > bounded.WorkloadFile.Bytes:
			ok = false
			l.res.Diags.Errorf(l.rel(f), 0, 0, "", "is %s, over wlc's bound of %s for %s; split it into several files", bounded.Bytes(fi.Size()), bounded.Bytes(bounded.WorkloadFile.Bytes), bounded.WorkloadFile.What)
		}
	}
	return ok
}

func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a " + m.Type().String() + " file"
}

// packageClash reports cue/load's "found packages a (x.cue) and b
// (y.cue)", which has no position and names two files, as one error at
// the package clause of each file whose package is not the one most of
// the directory's files declare. It returns false for other errors.
func (l *loader) packageClash(err error, dir string) bool {
	var clash *load.MultiplePackageError
	for _, e := range cueerrors.Errors(err) {
		if m, ok := e.(*load.MultiplePackageError); ok {
			clash = m
		}
	}
	if clash == nil {
		return false
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.cue"))
	type clause struct {
		file string
		name *ast.Ident
	}
	var clauses []clause
	count := map[string]int{}
	for _, f := range files {
		base := filepath.Base(f)
		if strings.HasSuffix(base, "_tool.cue") || strings.HasSuffix(base, "_test.cue") {
			continue // not loaded by cue/load
		}
		if p := packageClause(f); p != nil && p.Name.Name != "_" {
			clauses = append(clauses, clause{f, p.Name})
			count[p.Name.Name]++
		}
	}
	// The package most files declare is the one meant; with no single
	// one, every file is reported with the others' packages.
	want, tie := "", false
	for name, n := range count {
		switch {
		case n > count[want]:
			want, tie = name, false
		case n == count[want]:
			tie = true
		}
	}
	reported := false
	for _, c := range clauses {
		if c.name.Name == want && !tie {
			continue
		}
		byPkg := map[string][]string{}
		for _, o := range clauses {
			if o.name.Name != c.name.Name && (o.name.Name == want || tie) {
				byPkg[o.name.Name] = append(byPkg[o.name.Name], filepath.Base(o.file))
			}
		}
		var others []string
		for _, name := range slices.Sorted(maps.Keys(byPkg)) {
			verb := "declares"
			if len(byPkg[name]) > 1 {
				verb = "declare"
			}
			others = append(others, fmt.Sprintf("%s %s package %s", strings.Join(byPkg[name], ", "), verb, name))
		}
		fix := fmt.Sprintf("write `package %s`", want)
		if tie {
			fix = "give them one package clause"
		}
		reported = true
		pos := c.name.Pos()
		l.res.Diags.Errorf(l.rel(c.file), pos.Line(), pos.Column(), "", "package %s, but %s, and a directory holds one package; %s (or move the file to another directory)", c.name.Name, strings.Join(others, ", "), fix)
	}
	return reported
}

// moduleFile is what the loader reads of cue.mod/module.cue: the module
// path, "" unless the file gives it as a top-level literal (a module
// file is data: literals only).
type moduleFile struct {
	path string
}

func readModuleFile(root string) moduleFile {
	name := filepath.Join(root, "cue.mod", "module.cue")
	src, err := os.ReadFile(name)
	if err != nil {
		return moduleFile{}
	}
	f, err := parser.ParseFile(name, src)
	if err != nil {
		return moduleFile{} // cue/load reports it
	}
	var m moduleFile
	for _, d := range f.Decls {
		fd, ok := d.(*ast.Field)
		if !ok {
			continue
		}
		if label, _, _ := ast.LabelName(fd.Label); label == "module" {
			m.path = stringLit(fd.Value)
		}
	}
	return m
}

// stringLit is the value of a plain string literal, or "".
func stringLit(e ast.Expr) string {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return ""
	}
	s, err := literal.Unquote(lit.Value)
	if err != nil {
		return ""
	}
	return s
}

// typedWorkloads is what wlc init's workloads/wlc.cue writes to type the
// workloads.
var typedWorkloads = schema.WorkloadsTyping + " and " + schema.ProfileNamesTyping

// typed checks that the package types its workloads and profiles with the
// schema and hands each workload its profile: without workloads/wlc.cue's
// typing lines every workload would pass vet unchecked.
func (l *loader) typed(pkg cue.Value, dir string) bool {
	ok := true
	for _, c := range []struct {
		path  cue.Path
		field string
		want  string
	}{
		{pathWorkloads, "precision", typedWorkloads},
		{pathProfiles, "runtime", schema.ProfilesTyping},
	} {
		pattern := pkg.LookupPath(c.path).LookupPath(cue.MakePath(cue.AnyString))
		if pattern.Exists() && pattern.LookupPath(cue.MakePath(cue.Str(c.field).Required())).Exists() {
			continue
		}
		if pattern.Exists() && pattern.LookupPath(cue.ParsePath(c.field)).Exists() {
			continue
		}
		ok = false
		l.errorf("the package in %s does not type its %s with the schema, so nothing in them would be checked: add %s (import \"%s\"), as wlc init's workloads/wlc.cue does", dir, c.path, c.want, schema.ImportPath)
	}
	if !ok {
		return false
	}
	// A workload is handed its own profile, not every profile (CUE would
	// evaluate them all again in each workload): without the names every
	// workload's profile would be "unknown".
	pattern := pkg.LookupPath(pathWorkloads).LookupPath(cue.MakePath(cue.AnyString))
	if names := pattern.LookupPath(cue.MakePath(cue.Def("#profileNames"))); !names.Allows(cue.AnyIndex) {
		// The line before #facts still works (a profile has every fact),
		// at a fifth more of vet's time: say so, once, where it is.
		if handsWholeProfile(pattern.LookupPath(cue.MakePath(cue.Def("#profile")))) {
			pos := pattern.Pos()
			l.res.Diags.Warnf(l.rel(pos.Filename()), pos.Line(), pos.Column(), "workloads",
				"the package in %s hands each workload its whole profile (#profile: profiles[W.profile]), which CUE evaluates again in every workload, a fifth of vet's time; hand it the profile's facts instead, as wlc init's workloads/wlc.cue does: %s", dir, schema.WorkloadsTyping)
		}
		return true
	}
	pos := pattern.Pos()
	l.res.Diags.Errorf(l.rel(pos.Filename()), pos.Line(), pos.Column(), "workloads",
		"the package in %s does not hand each workload its profile: workloads need #profile: profiles[W.profile].#facts and #profileNames: _profileNames (a workload no longer takes #profiles: profiles, which made CUE evaluate every profile in each workload); write the workloads line as wlc init's workloads/wlc.cue does: %s", dir, typedWorkloads)
	return false
}

// handsWholeProfile reports whether the workloads' #profile is a profile
// itself (profiles[W.profile]) rather than its #facts: an index as the
// expression, not a selector on one.
func handsWholeProfile(v cue.Value) bool {
	op, args := v.Expr()
	if op == cue.AndOp {
		for _, a := range args {
			if handsWholeProfile(a) {
				return true
			}
		}
		return false
	}
	return op == cue.IndexOp
}

// useModule points the loader at the schema of the module rooted at root
// and returns the argument that loads it. In wlc's own module the schema
// is its schema/ package; any other module (a team's repository) imports
// it from cue.mod/gen, where CUE finds packages of modules it does not
// fetch.
func (l *loader) useModule(root string) (schemaArg string) {
	schemaArg = "./schema"
	l.schemaDir = filepath.Join(root, "schema")
	l.module = readModuleFile(root)
	if dir := schemaCopy(root, l.module); dir != "" {
		schemaArg = schema.ImportPath
		l.schemaDir = dir
	}
	return schemaArg
}

// SchemaCopy is where the module rooted at root keeps its copy of wlc's
// schema (under cue.mod/gen), or "" when the module is wlc's own
// repository, whose schema is schema/ itself.
func SchemaCopy(root string) string { return schemaCopy(root, readModuleFile(root)) }

func schemaCopy(root string, m moduleFile) string {
	if mod := m.path; mod == "" || mod == schema.ModulePath || mod+"@v0" == schema.ModulePath {
		return ""
	}
	return filepath.Join(root, filepath.FromSlash(schema.CopyDir))
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
			fix := "rebuild wlc (go install ./cmd/wlc) to use the edited schema"
			if l.schemaDir != filepath.Join(l.res.ModuleRoot, "schema") {
				fix = "run wlc init --update-schema to make the copy this wlc's schema (the plain cue CLI and editors read the copy)"
			}
			l.res.Diags.Warnf(l.rel(target), 0, 0, "", "differs from the schema built into wlc, which is used instead; %s", fix)
		}
		overlay[target] = load.FromBytes(data)
		return nil
	})
	// A file the embedded schema lacks is not hidden by the overlay: CUE
	// loads it into the schema package.
	extra, _ := filepath.Glob(filepath.Join(l.schemaDir, "*.cue"))
	for _, f := range extra {
		if _, ok := overlay[f]; !ok {
			l.res.Diags.Warnf(l.rel(f), 0, 0, "", "is not part of the schema built into wlc, but CUE loads it into the schema package beside it; remove it (wlc init --update-schema removes such files from a copy)")
		}
	}
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

// decodeWorkloads validates, decodes and checks every workload of pkg,
// then the rules across workloads.
func (l *loader) decodeWorkloads(pkg cue.Value) {
	at := fieldsAt{}
	l.evalWorkloads(pkg, at)
	l.finishWorkloads(at)
}

// evalWorkloads validates, decodes and checks every workload of pkg (a
// package or one shard of it), appending the clean ones to l.res and,
// for each, where a clash with another workload would be reported.
func (l *loader) evalWorkloads(pkg cue.Value, at fieldsAt) {
	it, err := pkg.LookupPath(pathWorkloads).Fields()
	if err != nil {
		l.addCUEError(err, pkg)
		return
	}
	// Collect in source order (recipe derivation reports findings),
	// validate and decode every workload, then report and check in order.
	// One goroutine: reading a value finalizes what it reaches, and a
	// field that is one reference (`nodes: #WorkloadTypes.nodes`) is a
	// vertex every workload shares, so two workloads read side by side
	// evaluate it at once (the race detector saw CUE's scheduler written
	// by two decodes, TestShardedLoadBundled). A large package's shards
	// run side by side instead, each in its own context.
	type job struct {
		wv, pkg cue.Value
		rd      *recipeDerivation
		err     error // Validate's
		w       schema.Workload
		decErr  error
	}
	var jobs []*job
	var derived []*recipeDerivation
	for it.Next() {
		wv := it.Value()
		rd, ok := l.deriveRecipe(wv)
		if !ok {
			continue
		}
		if rd != nil {
			derived = append(derived, rd)
		}
		jobs = append(jobs, &job{wv: wv, pkg: pkg, rd: rd})
	}
	l.fillDerived(derived)
	for _, j := range jobs {
		if j.rd != nil {
			j.wv, j.pkg = j.rd.wv, l.pkg
		}
	}
	var labels map[[2]string]token.Pos
	if l.opts.Progress != nil {
		labels = labelIndex(l.files)
	}
	for _, j := range jobs {
		l.progress(j.wv, labels)
		if j.err = j.wv.Validate(cue.Concrete(true), cue.Final()); j.err == nil {
			j.decErr = cuedecode.Decode(j.wv, &j.w)
		}
	}
	failed := map[string]failure{}
	for _, j := range jobs {
		wv := j.wv
		before := len(l.res.Diags)
		if j.err != nil {
			l.reportInvalid(wv, j.pkg, j.err)
			j.rd.blameDerived(l, before)
			sels := wv.Path().Selectors()
			if len(sels) == 2 && sels[1].IsString() {
				if j.rd == nil { // a recipe's workload is not the user's tree alone
					failed[sels[1].Unquoted()] = failure{j.err, slices.Clone(l.res.Diags[before:])}
				}
				lw := soundParts(wv, sels[1].Unquoted())
				j.rd.apply(&lw)
				l.locate(&lw, wv)
				l.checkFields(wv, &lw)
				// The rules across workloads still see it (a clash of run
				// names comes in the same run as its other errors).
				l.res.refused = append(l.res.refused, lw)
				l.markClashes(wv, &lw, at)
			}
			continue
		}
		if j.decErr != nil {
			l.addCUEError(j.decErr, j.pkg)
			continue
		}
		lw := Workload{Workload: j.w}
		j.rd.apply(&lw)
		l.locate(&lw, wv)
		if l.checkWorkload(wv, &lw) {
			l.res.Workloads = append(l.res.Workloads, lw)
			l.markClashes(wv, &lw, at)
		}
	}
	l.revealHidden(failed, len(jobs))
}

// soundParts decodes what the field rules read of a workload with errors,
// where it is sound, so their findings come in the same run: single
// fields, and of a map with one bad entry (env, model_args) or a list with
// one bad element (lm_eval.tasks, vllm_bench.configs) the others.
func soundParts(wv cue.Value, name string) Workload {
	lw := Workload{Workload: schema.Workload{Name: name}}
	var sglangArgs, routerArgs []string
	for p, dst := range map[string]any{"profile": &lw.Profile, "dashboard_name": &lw.DashboardName, "env": &lw.Env, "secrets": &lw.Secrets,
		"serve.extra_args": &lw.Serve.ExtraArgs, "engine": &lw.Engine, "sglang": &lw.SGLang, "sglang.extra_args": &sglangArgs,
		"sglang_bench": &lw.SGLangBench, "disagg.router.extra_args": &routerArgs} {
		decodeSound(wv.LookupPath(pathOf(p)), dst)
	}
	if lw.Env == nil {
		lw.Env = soundStrings(wv.LookupPath(pathOf("env")))
	}
	var cats []string
	if decodeSound(wv.LookupPath(pathOf("bfcl.test_categories")), &cats) {
		lw.BFCL = &schema.BFCL{TestCategories: cats}
	}
	if ma := wv.LookupPath(pathOf("lm_eval.model_args")); ma.Exists() {
		lw.LMEval = &schema.LMEval{ModelArgs: soundEntries(ma)}
		for _, t := range elements(wv.LookupPath(pathOf("lm_eval.tasks"))) {
			task := schema.LMEvalTask{ModelArgs: soundEntries(t.LookupPath(pathOf("model_args")))}
			decodeSound(t.LookupPath(pathOf("name")), &task.Name)
			lw.LMEval.Tasks = append(lw.LMEval.Tasks, task)
		}
	}
	if b := wv.LookupPath(pathOf("vllm_bench")); b.Exists() {
		// A config with an error keeps its place, empty: the rules on
		// runs name configs by index.
		lw.VLLMBench = &schema.VLLMBench{}
		for _, c := range elements(b.LookupPath(pathOf("configs"))) {
			var bc schema.BenchConfig
			decodeSound(c, &bc)
			lw.VLLMBench.Configs = append(lw.VLLMBench.Configs, bc)
		}
		if sw := b.LookupPath(pathOf("sweep")); sw.Exists() {
			var s schema.BenchSweep
			if decodeSound(sw, &s) {
				lw.VLLMBench.Sweep = &s
			}
		}
	}
	if lw.SGLang == nil && sglangArgs != nil {
		lw.SGLang = &schema.SGLangServe{ExtraArgs: sglangArgs}
	}
	if routerArgs != nil {
		lw.Disagg = &schema.Disagg{Router: schema.Router{ExtraArgs: routerArgs}}
	}
	return lw
}

// decodeSound decodes v into dst when v is sound (concrete, no error
// inside) and says whether it did.
func decodeSound(v cue.Value, dst any) bool {
	return v.Validate(cue.Concrete(true)) == nil && v.Decode(dst) == nil
}

// elements are a list's elements by index, sound or not (List refuses a
// list with an error inside).
func elements(list cue.Value) []cue.Value {
	var out []cue.Value
	for i := 0; ; i++ {
		e := list.LookupPath(cue.MakePath(cue.Index(i)))
		if !e.Exists() {
			return out
		}
		out = append(out, e)
	}
}

// locate sets where w is defined: its profile field's position, relative
// to the module root (generated files name it, and must not depend on
// where wlc ran).
func (l *loader) locate(w *Workload, wv cue.Value) {
	if pos := l.userPos(wv.LookupPath(pathOf("profile"))); pos.IsValid() {
		w.File = l.moduleRel(pos.Filename())
		w.Line, w.Column = pos.Line(), pos.Column()
	}
}

// markClashes records where a clash of w with another workload would be
// reported (its run name's field, its fixed port), while its CUE value is
// alive.
func (l *loader) markClashes(wv cue.Value, w *Workload, at fieldsAt) {
	field := check.RunNameField(&w.Workload)
	at[[2]string{w.Name, field}] = l.at(l.pos(wv, field))
	if w.Port != 0 {
		at[[2]string{w.Name, "port"}] = l.at(l.pos(wv, "port"))
	}
}

// finishWorkloads applies the rules across workloads and sorts them.
func (l *loader) finishWorkloads(at fieldsAt) {
	l.checkPorts(l.res.Workloads, at)
	if refused := l.checkRunNames(l.res.Workloads, at); len(refused) > 0 {
		kept := l.res.Workloads[:0]
		for _, w := range l.res.Workloads {
			if !refused[w.Name] {
				kept = append(kept, w)
			}
		}
		l.res.Workloads = kept
	}
	sort.Slice(l.res.Workloads, func(i, j int) bool { return l.res.Workloads[i].Name < l.res.Workloads[j].Name })
}

// Resolve turns a loaded workload into its plan with the export-time
// overrides: the catalog is this load's, and a recipe-derived workload
// keeps where it came from.
func (r *Result) Resolve(w Workload, ov plan.Overrides) (plan.Workload, error) {
	cat := plan.Catalog{Profiles: r.Profiles, Hardware: r.Hardware, Architectures: r.Architectures}
	p, err := plan.Resolve(w.Workload, w.File, cat, ov)
	if err != nil {
		return plan.Workload{}, fmt.Errorf("%s:%d:%d: %w", w.File, w.Line, w.Column, err)
	}
	p.Recipe = w.Recipe
	// The row shapes come from the binary's schema, like every rule.
	if p.Ingest.Shapes, err = r.ingestShapes(); err != nil {
		return plan.Workload{}, err
	}
	return p, nil
}

// ingestShapes describes the row definitions of the schema this load
// built (once), or of the embedded schema for a Result made by hand.
func (r *Result) ingestShapes() (string, error) {
	rs := r.rows
	if rs == nil {
		return ingest.Shapes()
	}
	rs.once.Do(func() { rs.shapes, rs.err = ingest.ShapesOf(rs.schema) })
	return rs.shapes, rs.err
}
