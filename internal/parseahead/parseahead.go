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

	// asked is the configuration of the loader's first full parse (set
	// once, by askOnce): trees parsed ahead with another are not its.
	askOnce sync.Once
	asked   parser.Config
}

type file struct {
	name    string
	given   bool        // src was handed to New (so never written after)
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
// for the first of them (or from Start). sources holds the contents of those already
// read; the others are read ahead too.
func New(names []string, sources map[string][]byte) *Parser {
	p := &Parser{byName: map[string]*file{}}
	for _, n := range names {
		if p.byName[n] != nil {
			continue
		}
		src, given := sources[n]
		f := &file{name: n, src: src, given: given, done: make(chan struct{})}
		p.files = append(p.files, f)
		p.byName[n] = f
	}
	return p
}

// Start parses ahead from now with cfg, unless parsing has started: the
// configuration the caller expects the loader's first request to ask for
// (cue/load's: comments kept, the module's language version). Trees
// reports false if the loader asks for another, and a request with
// another gets a tree of its own. A goroutine per CPU parses (the
// loader's own work between two files is a small part of a parse, so it
// mostly waits for the next tree).
func (p *Parser) Start(cfg parser.Config) {
	p.once.Do(func() {
		p.cfg = cfg
		for range runtime.GOMAXPROCS(0) {
			p.wg.Go(p.work)
		}
	})
}

// ParseFile is cue/load's Config.ParseFile.
func (p *Parser) ParseFile(name string, src any, cfg parser.Config) (*ast.File, error) {
	f := p.byName[name]
	b, isBytes := src.([]byte)
	if f == nil || !isBytes || cfg.Mode&(parser.PackageClauseOnly|parser.ImportsOnly) != 0 {
		return parser.ParseFile(name, src, cfg)
	}
	// The first full parse fixes the configuration (unless Start did):
	// cue/load asks for every file of a module with the same one (the
	// module's language version, comments kept).
	p.askOnce.Do(func() { p.asked = cfg })
	p.Start(cfg)
	if f.given && !bytes.Equal(b, f.src) {
		// Not the file's bytes (a Header, or a file that changed since
		// it was read): parsed here, leaving the file's own bytes to be
		// parsed ahead for Trees.
		return parser.ParseFile(name, src, cfg)
	}
	if cfg != p.cfg || f.handed.Swap(true) {
		// Another configuration, or a second request for the file: a
		// tree of its own, as parser.ParseFile would give.
		return parser.ParseFile(name, src, cfg)
	}
	if !f.claimed.Swap(true) {
		// Not parsed ahead yet: the loader's bytes, here (the same as
		// given ones, which another request may be reading).
		if !f.given {
			f.src = b
		}
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

// Forget drops the trees and sources the parser holds, once the loader
// and Trees have been handed theirs: cue/load keeps its Config, and with
// it this parser (its ParseFile), as long as the instances it returned
// live, which would keep every file's tree alive as long as those, where
// a caller may let go of each tree once it is done with it. A later
// request parses a tree of its own. Call it once the loader is done
// with the parser, after Stop (and Trees).
func (p *Parser) Forget() {
	for _, f := range p.files {
		if !f.claimed.Swap(true) {
			close(f.done) // never parsed ahead (stopped before it)
		}
		<-f.done
		f.handed.Store(true)
		f.tree, f.src, f.err = nil, nil, nil
	}
}

// Header is the part of a file's source cue/load reads to place the file
// in its package: its attributes, package clause and comments up to the
// end of that clause, or nil for a file with imports (cue/load refuses an
// import the rest of the file does not use) or whose header does not
// parse. Handed to cue/load in place of the file (an overlay), it lets
// the loader place the file without parsing it; Trees gives the file's
// real tree to put in the instance.
func Header(name string, src []byte) []byte {
	f, err := parser.ParseFile(name, src, parser.ImportsOnly)
	if err != nil {
		return nil
	}
	end := 0
	for _, d := range f.Decls {
		if _, ok := d.(*ast.ImportDecl); ok {
			return nil
		}
		end = max(end, d.End().Offset())
	}
	return append(src[:end:end], '\n')
}

// Trees parses, on every CPU, each file the workers have not parsed, from
// the bytes handed to New and with the configuration of the loader's
// first full parse, and returns every file's tree by name. It reports
// false when the loader asked for no full parse (no configuration to
// parse with), when it asked with another configuration than Start's,
// or when a file does not parse: the loader, handed the files
// themselves, reports that error. Call it after Stop.
func (p *Parser) Trees() (map[string]*ast.File, bool) {
	askedFor := true
	p.askOnce.Do(func() { askedFor = false })
	if !askedFor || p.asked != p.cfg {
		return nil, false
	}
	p.stop.Store(false)
	for range runtime.GOMAXPROCS(0) {
		p.wg.Go(p.work)
	}
	p.wg.Wait()
	trees := make(map[string]*ast.File, len(p.files))
	for _, f := range p.files {
		<-f.done
		if f.err != nil || f.tree == nil || !f.given {
			return nil, false
		}
		trees[f.name] = f.tree
	}
	return trees, true
}
