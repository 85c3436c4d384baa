// Package parseahead parses a CUE package's files on every CPU ahead of
// cue/load, which parses them one after the other while it loads the
// package: for a thousand workload files that is about a third of a
// second of a run, on one core.
//
// cue/load calls Config.ParseFile for each file it parses. Parser.ParseFile
// is that hook: it hands cue/load the tree parsed ahead from the very bytes
// cue/load passes, with the very parser configuration it asks for, and
// parses anything else itself, so a load with the hook yields what a load
// without it yields.
package parseahead

import (
	"bytes"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/parser"
)

// Parser parses a set of files ahead of the loader that asks for them.
type Parser struct {
	files  []*file // in the order cue/load asks for them (by name)
	byName map[string]*file

	once sync.Once
	cfg  parser.Config // the configuration files are parsed ahead with
	stop atomic.Bool
	wg   sync.WaitGroup
}

type file struct {
	name    string
	claimed atomic.Bool // a goroutine reads and parses it, or has
	handed  atomic.Bool // its tree went to the loader
	done    chan struct{}
	// Set by the goroutine that claimed the file, before done is closed.
	src  []byte
	tree *ast.File
	err  error
}

// New returns a parser for the files names (absolute file names, in the
// order the loader reads them), which it parses ahead once the loader asks
// for the first of them. sources holds the contents of those already
// read; the others are read ahead too.
func New(names []string, sources map[string][]byte) *Parser {
	p := &Parser{byName: map[string]*file{}}
	for _, n := range names {
		if p.byName[n] != nil {
			continue
		}
		f := &file{name: n, src: sources[n], done: make(chan struct{})}
		p.files = append(p.files, f)
		p.byName[n] = f
	}
	return p
}

// ParseFile is cue/load's Config.ParseFile.
func (p *Parser) ParseFile(name string, src any, cfg parser.Config) (*ast.File, error) {
	f := p.byName[name]
	b, isBytes := src.([]byte)
	if f == nil || !isBytes || cfg.Mode&(parser.PackageClauseOnly|parser.ImportsOnly) != 0 {
		return parser.ParseFile(name, src, cfg)
	}
	// The first full parse fixes the configuration: cue/load asks for
	// every file of a module with the same one (the module's language
	// version, comments kept). A goroutine per CPU parses: the loader's
	// own work between two files is a small part of a parse, so it
	// mostly waits for the next tree.
	p.once.Do(func() {
		p.cfg = cfg
		for range runtime.GOMAXPROCS(0) {
			p.wg.Go(p.work)
		}
	})
	if cfg != p.cfg || f.handed.Swap(true) {
		// Another configuration, or a second request for the file: a
		// tree of its own, as parser.ParseFile would give.
		return parser.ParseFile(name, src, cfg)
	}
	if !f.claimed.Swap(true) {
		// Not parsed ahead yet: the loader's bytes, here.
		f.src = b
		f.tree, f.err = parser.ParseFile(name, b, cfg)
		close(f.done)
		return f.tree, f.err
	}
	<-f.done
	if f.src == nil || !bytes.Equal(b, f.src) {
		// Read ahead from another version of the file (it changed
		// since), or not at all.
		return parser.ParseFile(name, src, cfg)
	}
	return f.tree, f.err
}

// work parses the files nobody has claimed, in order, until none is left
// or Stop is called.
func (p *Parser) work() {
	for _, f := range p.files {
		if p.stop.Load() {
			return
		}
		if f.claimed.Swap(true) {
			continue
		}
		if f.src == nil {
			// Unreadable here: the loader reports what it finds.
			f.src, _ = os.ReadFile(f.name)
		}
		if f.src != nil {
			f.tree, f.err = parser.ParseFile(f.name, f.src, p.cfg)
		}
		close(f.done)
	}
}

// Stop ends the parsing ahead once the load is done (or failed early),
// and waits for it.
func (p *Parser) Stop() {
	p.stop.Store(true)
	p.wg.Wait()
}
