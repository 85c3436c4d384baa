package load

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/token"

	"github.com/wlcdev/wlc/internal/par"
)

// Sharding. CUE evaluates a package on one goroutine, and its collector
// re-marks the whole live value graph on every cycle, so a package of a
// thousand workloads costs seconds and a gigabyte in one evaluation. Most
// workload files only add `workloads: <name>: {...}` entries typed by
// the package's shared files (wlc.cue, profiles, settings, helpers):
// such a file evaluates the same beside the shared files alone as in the
// whole package. The loader then evaluates runs of those files as shards,
// each with the shared files in a cue.Context of its own (a context is
// single-threaded, and values of two contexts cannot meet), GOMAXPROCS at
// a time, and keeps only each shard's findings and decoded workloads, so
// at most that many shards' values are alive at once. Everything outside
// workloads (settings, profiles, top-level checks) is evaluated once, on
// the shared files. A package whose files reach into each other's
// workloads is loaded as one package, as is a small one. wlcbench at
// 1,000 workloads, this build against one that never shards (5
// interleaved repetitions, 2 CPUs, load average 1-2, medians): vet wall
// 0.58x, CPU 0.93x, peak RSS 0.58x (229 against 402 MB); export wall
// 0.67x, CPU 0.98x, RSS 0.44x (236 against 512 MB).

// shardFiles is how many workload files a shard holds at most: small
// enough that GOMAXPROCS shards' values stay small, large enough that
// each shard's own compile of the schema and evaluation of the shared
// files (~5 ms a shard) is a small part of its cost. Cold vet of 1,000
// bundled-size workloads on 2 CPUs, 8 interleaved runs each (medians):
// 16 files a shard 1.84 s wall, 3.30 s CPU, 176 MB; 32 files 1.67 s,
// 3.08 s, 193 MB; 48 files 1.73 s, 3.15 s, 215 MB (fewer shards than
// rounds of GOMAXPROCS leave a CPU idle at the end).
const shardFiles = 32

// shardPlan is a package's files split for a sharded load.
type shardPlan struct {
	shared []*ast.File   // in every shard: everything but workload files
	shards [][]*ast.File // runs of workload files, in package order
	// inst are the files of each shard's instance: the shared files and
	// the shard's, in package order.
	inst [][]*ast.File
}

// planShards splits files (in package order) into shards of at most size
// workload files, or returns nil when the package must be evaluated as
// one: a single shard (the package's own load is as cheap), or a file
// whose evaluation could depend on another workload file (see
// workloadFile and referencedNames).
func planShards(files []*ast.File, size int) *shardPlan {
	if size < 1 {
		return nil
	}
	p := &shardPlan{}
	var wfiles []*ast.File
	var names [][]string
	// Each file's tree is walked whole, once, on every CPU (a thousand
	// workload files took 30 ms on one): the names it refers to say
	// whether it reaches the workloads.
	refs := make([]map[string]bool, len(files))
	par.Do(len(files), func(i int) { refs[i] = referencedNames(files[i]) })
	for i := range files {
		if refs[i]["workloads"] {
			return nil
		}
	}
	for _, f := range files {
		ws, ok := workloadFile(f)
		switch {
		case ok:
			wfiles = append(wfiles, f)
			var ns []string
			for _, w := range ws {
				ns = append(ns, workloadName(w))
			}
			names = append(names, ns)
		case declaresWorkloads(f):
			return nil // workloads beside other declarations: in every shard
		default:
			p.shared = append(p.shared, f)
		}
	}
	// A workload defined in several files is one value: its files stay in
	// one shard (with every file between them, keeping package order).
	// Those runs are the units shards are made of.
	last := map[string]int{}
	for i, ws := range names {
		for _, w := range ws {
			last[w] = i
		}
	}
	var units [][]*ast.File
	start, end := 0, 0 // the current unit is wfiles[start:i]; it must reach end
	for i, ws := range names {
		if i > start && i > end {
			units = append(units, wfiles[start:i])
			start = i
		}
		for _, w := range ws {
			end = max(end, last[w])
		}
	}
	if start < len(wfiles) {
		units = append(units, wfiles[start:])
	}
	var cur []*ast.File
	for _, u := range units {
		cur = append(cur, u...)
		if len(cur) >= size {
			p.shards = append(p.shards, cur)
			cur = nil
		}
	}
	if len(cur) > 0 {
		p.shards = append(p.shards, cur)
	}
	if len(p.shards) < 2 {
		return nil
	}
	order := make(map[*ast.File]int, len(files))
	for i, f := range files {
		order[f] = i
	}
	for _, sh := range p.shards {
		in := slices.Concat(p.shared, sh)
		slices.SortFunc(in, func(a, b *ast.File) int { return order[a] - order[b] })
		p.inst = append(p.inst, in)
	}
	return p
}

// workloadFile reports whether f declares nothing but workloads, each
// under a plain label (`workloads: name: {...}`), and lists their fields.
func workloadFile(f *ast.File) ([]*ast.Field, bool) {
	var ws []*ast.Field
	for _, d := range f.Decls {
		switch x := d.(type) {
		case *ast.Package, *ast.ImportDecl, *ast.CommentGroup, *ast.Attribute:
			continue
		case *ast.Field:
			if label, ok := plainLabel(x); !ok || label != "workloads" {
				return nil, false
			}
			st, ok := x.Value.(*ast.StructLit)
			if !ok {
				return nil, false
			}
			for _, e := range st.Elts {
				switch w := e.(type) {
				case *ast.CommentGroup, *ast.Attribute:
					continue
				case *ast.Field:
					if _, ok := plainLabel(w); !ok {
						return nil, false
					}
					ws = append(ws, w)
				default: // a comprehension, embedding or let: not one entry
					return nil, false
				}
			}
		default:
			return nil, false
		}
	}
	return ws, len(ws) > 0
}

// workloadName is a workload field's name (workloadFile checked its label).
func workloadName(w *ast.Field) string {
	name, _ := plainLabel(w)
	return name
}

// plainLabel is a field's name when it is a regular field with a
// constant label: no alias, pattern, dynamic label or constraint marker.
func plainLabel(f *ast.Field) (string, bool) {
	if f.Constraint != token.ILLEGAL {
		return "", false
	}
	switch f.Label.(type) {
	case *ast.Ident, *ast.BasicLit:
	default:
		return "", false
	}
	name, isIdent, err := ast.LabelName(f.Label)
	if err != nil || (isIdent && (strings.HasPrefix(name, "_") || strings.HasPrefix(name, "#"))) {
		return "", false
	}
	return name, true
}

// declaresWorkloads reports whether a file that is not a workload file
// declares anything under workloads but its typing pattern
// (`workloads: [Name=string]: ...`, wlc.cue).
func declaresWorkloads(f *ast.File) bool {
	for _, d := range f.Decls {
		x, ok := d.(*ast.Field)
		if !ok {
			if _, ok := d.(*ast.EmbedDecl); ok {
				return true // an embedded struct may hold workloads
			}
			continue
		}
		name, _, err := ast.LabelName(x.Label)
		if err != nil {
			return true // a dynamic top-level label may be workloads
		}
		if name != "workloads" {
			continue
		}
		st, ok := x.Value.(*ast.StructLit)
		if !ok {
			return true
		}
		for _, e := range st.Elts {
			switch w := e.(type) {
			case *ast.CommentGroup, *ast.Attribute:
			case *ast.Field:
				if _, ok := w.Label.(*ast.ListLit); !ok {
					return true // only a pattern [Name=string] is allowed
				}
			default:
				return true
			}
		}
	}
	return false
}

// referencedNames is the set of names f's identifiers refer to (not a
// label, a selector's field name, the package's name or an import). One
// of them `workloads` (an identifier, not a label) makes f's value depend
// on every workload file, so no shard would see what the package sees.
func referencedNames(f *ast.File) map[string]bool {
	names := map[string]bool{}
	var visit func(n ast.Node) bool
	visit = func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.Package, *ast.ImportDecl:
			return false // the package's own name is not a reference
		case *ast.Field:
			switch lab := x.Label.(type) {
			case *ast.Ident, *ast.BasicLit:
			case *ast.Alias:
				ast.Walk(lab.Expr, visit, nil)
			default:
				ast.Walk(lab, visit, nil) // dynamic labels and patterns are expressions
			}
			ast.Walk(x.Value, visit, nil)
			return false
		case *ast.SelectorExpr:
			ast.Walk(x.X, visit, nil) // x.Sel is a label
			return false
		case *ast.Ident:
			names[x.Name] = true
		}
		return true
	}
	ast.Walk(f, visit, nil)
	return names
}

// shardResult is what one shard's evaluation leaves: findings, clean
// workloads and where their clashes are reported (no CUE values, so the shard's
// memory goes once it is done).
type shardResult struct {
	res      *Result
	base     int // res.Diags[:base] were the package's before the shard
	at       fieldsAt
	buildErr error // the shard did not build
}

// evalShards evaluates the workloads of every shard of p, GOMAXPROCS
// shards at a time, each in its own cue.Context, and merges their
// findings and workloads into l.res in package order. It returns false,
// having changed nothing, when a shard fails to build: its workload files
// are then l.broken, or, when they cannot be left out, the one-package
// load reports why.
func (l *loader) evalShards(pkgInst *build.Instance, p *shardPlan, dir string) bool {
	results := make([]*shardResult, len(p.shards))
	par.Do(len(p.shards), func(i int) {
		results[i] = l.evalShard(pkgInst, p, i)
	})
	var buildErr cueerrors.Error
	for _, r := range results {
		if r.buildErr != nil {
			buildErr = cueerrors.Append(buildErr, cueerrors.Promote(r.buildErr, ""))
		}
	}
	if buildErr != nil {
		l.dropBroken(buildErr, dir, slices.Concat(p.shards...))
		return false
	}
	at := fieldsAt{}
	l.res.shards = len(results)
	if l.seen == nil {
		l.seen = map[string]bool{}
	}
	for _, r := range results {
		// The one-package load reports an error of a path outside the
		// workloads once (see addCUEError's keys): so does the merge.
		for _, d := range r.res.Diags[r.base:] {
			if !strings.HasPrefix(d.Path, "workloads.") {
				key := "merged\x00" + d.Path + "\x00" + d.Message
				if l.seen[key] {
					continue
				}
				l.seen[key] = true
			}
			l.res.Diags.Add(d)
		}
		l.res.Workloads = append(l.res.Workloads, r.res.Workloads...)
		l.res.refused = append(l.res.refused, r.res.refused...)
		maps.Copy(at, r.at)
	}
	l.finishWorkloads(at)
	return true
}

// evalShard builds the shared files and one shard's workload files as the
// package (same import path, so hidden names and messages are the
// package's) in a context of its own, and runs the workload part of the
// load on it with a loader of its own.
func (l *loader) evalShard(pkgInst *build.Instance, p *shardPlan, i int) *shardResult {
	inst := *pkgInst
	inst.Files = p.inst[i]
	// The shard reports its own progress (shards run side by side):
	// until a workload is validated, a budget exceeded here is the
	// shard's, so it names its files.
	lane := l.opts.Progress.Lane()
	defer lane.Done()
	lane.Set(l.rel(p.shards[i][0].Filename), shardWhat(l, p.shards[i]))
	ctx := cuecontext.New()
	vals, err := ctx.BuildInstances([]*build.Instance{&inst})
	if err != nil {
		return &shardResult{buildErr: err}
	}
	s := *l
	s.opts.Progress = lane
	s.ctx, s.files, s.pkg, s.inst, s.shared = ctx, inst.Files, vals[0], &inst, p.shared
	s.defsBuilt = nil // the main context's: built again here on first use
	s.seen = map[string]bool{}
	for k := range l.seen {
		s.seen[k] = true
	}
	s.recipes, s.recipesErr = nil, nil // recipes' values are a context's too
	r := *l.res
	r.Diags = slices.Clone(l.res.Diags)
	r.Workloads, r.refused = nil, nil
	s.res = &r
	out := &shardResult{res: &r, base: len(r.Diags), at: fieldsAt{}}
	if !l.opts.evaluateOnly {
		s.evalWorkloads(s.pkg, out.at)
	}
	return out
}

// shardWhat names a shard's workload files for the budget's error.
func shardWhat(l *loader, files []*ast.File) string {
	if len(files) == 1 {
		return "the workloads of " + l.rel(files[0].Filename)
	}
	return fmt.Sprintf("the workloads of %s and %d more files (%s last)", l.rel(files[0].Filename), len(files)-1, l.rel(files[len(files)-1].Filename))
}

// shardSize is the most workload files a shard holds; 0 never shards.
func (o Options) shardSize() int {
	switch {
	case o.shardFiles < 0:
		return 0
	case o.shardFiles == 0:
		return shardFiles
	}
	return o.shardFiles
}
