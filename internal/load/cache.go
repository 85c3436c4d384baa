package load

import (
	"fmt"
	"path/filepath"
	"strings"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/load"

	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/internal/gocodec"
	"github.com/wlcdev/wlc/internal/resultcache"
)

// Caching. A shard's result (its findings, its clean workloads and where
// their run names sit) is a function of the bytes of the files it was
// evaluated from (the shared files, the shard's own, cue.mod/module.cue),
// of this binary's code (rules, embedded schema and flag catalogs: its
// build ID), of the load's options, of the files settings read (a team's
// flag catalogs) and of where wlc runs (positions are printed relative to
// the working directory). With Options.Cache set, the loader reads the
// package's files itself and hands CUE those very bytes (an overlay), so
// a file saved during the run cannot be evaluated as one version and
// keyed as another; a shard whose result has every such input unchanged
// is not evaluated again. Anything the key could not see turns the cache
// off for the load: a file CUE read from disk (an imported package of the
// team's own, a package file in a parent directory), an @extern (embedded
// files), a flag catalog handed in by the caller; and a shard that
// consulted the recipes checkout is never stored (a recipe is a directory
// of YAML, read on use).

// cacheKind names the shape of a cached shard result; change it with
// shardEntry (the build ID changes with any code change anyway).
const cacheKind = "wlc shard result v1"

// shardEntry is what a cached shard result holds.
type shardEntry struct {
	Diags     []diag.Diagnostic
	Workloads []Workload
	RunNames  map[string]position
}

// cacheState is what a load knows for its cache.
type cacheState struct {
	c *resultcache.Cache
	// sources are the bytes handed to CUE for each file (absolute path).
	sources map[string][]byte
	// inputs are other files the load read, in order (settings' catalogs).
	inputs []input
	// off says an input of the load cannot be keyed.
	off bool
}

type input struct {
	name string
	data []byte
}

// readSources reads the package's files and cue.mod/module.cue into
// overlay, keeping their bytes for the keys.
func (cs *cacheState) readSources(root string, files []string, overlay map[string]load.Source) {
	cs.sources = readFiles(append([]string{filepath.Join(root, "cue.mod", "module.cue")}, files...))
	if cs.sources == nil {
		cs.off = true // CUE will report what it cannot read
		return
	}
	for f, data := range cs.sources {
		overlay[f] = load.FromBytes(data)
	}
}

// checkInstances turns the cache off when CUE will read a file whose
// bytes the key lacks: every file of the package and of its imports must
// be one the loader handed it (the embedded schema is the binary's).
func (cs *cacheState) checkInstances(insts []*build.Instance, overlay map[string]load.Source) {
	seen := map[*build.Instance]bool{}
	var walk func(*build.Instance)
	walk = func(inst *build.Instance) {
		if seen[inst] || cs.off {
			return
		}
		seen[inst] = true
		for _, f := range inst.BuildFiles {
			if _, ok := overlay[f.Filename]; !ok {
				cs.off = true
				return
			}
		}
		for _, f := range inst.Files {
			if hasExtern(f) {
				cs.off = true
				return
			}
		}
		for _, imp := range inst.Imports {
			walk(imp)
		}
	}
	for _, inst := range insts {
		walk(inst)
	}
}

// hasExtern reports a file-level @extern attribute (embedded files, which
// CUE reads itself).
func hasExtern(f *ast.File) bool {
	for _, d := range f.Decls {
		if a, ok := d.(*ast.Attribute); ok && strings.HasPrefix(a.Text, "@extern(") {
			return true
		}
	}
	return false
}

// noteInput records a file the load read and used (settings' catalogs);
// one it could not read turns the cache off (the error's text is part of
// the findings, and no key would hold it).
func (l *loader) noteInput(name string, data []byte, err error) {
	switch {
	case l.cache == nil:
	case err != nil:
		l.cache.off = true
	default:
		l.cache.inputs = append(l.cache.inputs, input{name, data})
	}
}

// sharedKey digests every input a shard's result depends on but its own
// files, or returns false when the load cannot be cached.
func (l *loader) sharedKey(p *shardPlan) (resultcache.Key, bool) {
	cs := l.cache
	if cs == nil || cs.off {
		return resultcache.Key{}, false
	}
	exe, err := resultcache.ExecutableID()
	if err != nil {
		return resultcache.Key{}, false
	}
	h := resultcache.NewHasher(cacheKind)
	h.String(exe)
	h.String(l.cwd)
	h.String(l.res.ModuleRoot)
	h.String(fmt.Sprintf("%#v", l.opts.Overrides))
	h.String(l.opts.RecipesDir)
	h.String(l.opts.RecipesFrom)
	for _, v := range l.opts.Vetters {
		h.String(fmt.Sprintf("%T", v))
	}
	h.String("module.cue")
	h.Bytes(cs.sources[filepath.Join(l.res.ModuleRoot, "cue.mod", "module.cue")])
	for _, f := range p.shared {
		h.String(f.Filename)
		h.Bytes(cs.sources[f.Filename])
	}
	for _, in := range cs.inputs {
		h.String(in.name)
		h.Bytes(in.data)
	}
	return h.Key(), true
}

// shardKey is the key of one shard's result.
func (l *loader) shardKey(shared resultcache.Key, files []*ast.File) resultcache.Key {
	h := resultcache.NewHasher(cacheKind)
	h.Bytes(shared[:])
	for _, f := range files {
		h.String(f.Filename)
		h.Bytes(l.cache.sources[f.Filename])
	}
	return h.Key()
}

// cachedShard is the stored result under k, if any.
func (l *loader) cachedShard(k resultcache.Key) (*shardResult, bool) {
	data, ok := l.cache.c.Get(k)
	if !ok {
		return nil, false
	}
	var e shardEntry
	if err := gocodec.Unmarshal(data, &e); err != nil {
		return nil, false
	}
	r := *l.res
	r.Diags, r.Workloads = e.Diags, e.Workloads
	return &shardResult{res: &r, runNames: e.RunNames, cached: true}, true
}

// storeShard stores a shard's result under k. A result that cannot be
// encoded is simply not stored: the next run evaluates it again.
func (l *loader) storeShard(k resultcache.Key, r *shardResult) {
	if r.failed || r.usedRecipes {
		return
	}
	data, err := gocodec.Marshal(&shardEntry{Diags: r.res.Diags[r.base:], Workloads: r.res.Workloads, RunNames: r.runNames})
	if err != nil {
		return
	}
	_ = l.cache.c.Put(k, data)
}
