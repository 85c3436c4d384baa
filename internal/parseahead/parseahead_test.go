package parseahead

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/format"
	"cuelang.org/go/cue/load"
	"cuelang.org/go/cue/parser"
	"github.com/google/go-cmp/cmp"
)

// module writes a CUE module with a package of n files and returns its
// root and the package's file names.
func module(t *testing.T, n int, extra map[string]string) (string, []string) {
	t.Helper()
	root := t.TempDir()
	write := func(name, text string) {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("cue.mod/module.cue", "module: \"example.test/m\"\nlanguage: version: \"v0.17.0\"\n")
	for i := range n {
		write(fmt.Sprintf("pkg/f%03d.cue", i), fmt.Sprintf("package pkg\n\nimport \"strings\"\n\n// file %d\nitems: f%d: {\n\tn: %d // the index\n\ts: strings.ToUpper(\"f%d\")\n}\n", i, i, i, i))
	}
	for name, text := range extra {
		write(name, text)
	}
	names, err := filepath.Glob(filepath.Join(root, "pkg", "*.cue"))
	if err != nil {
		t.Fatal(err)
	}
	return root, names
}

// loaded is what a load gives the caller: every file's tree, its
// comments and positions, and the errors.
func loaded(t *testing.T, root string, parse func(string, any, parser.Config) (*ast.File, error)) string {
	t.Helper()
	cfg := &load.Config{Dir: root}
	if parse != nil {
		cfg.ParseFile = parse
	}
	var b strings.Builder
	for _, inst := range load.Instances([]string{"./pkg"}, cfg) {
		fmt.Fprintf(&b, "instance %s: err %v\n", inst.ImportPath, inst.Err)
		for _, f := range inst.Files {
			src, err := format.Node(f)
			fmt.Fprintf(&b, "file %s (%v, %d comment groups, %v):\n%s\n", f.Filename, f.Pos(), len(ast.Comments(f)), err, src)
		}
	}
	return b.String()
}

func TestLoadGivesWhatCUEsOwnParseGives(t *testing.T) {
	root, names := module(t, 40, map[string]string{
		"pkg/zz_broken.cue": "package pkg\n\nitems: broken: {n: \n",
	})
	want := loaded(t, root, nil)
	if !strings.Contains(want, "expected operand") && !strings.Contains(want, "expected") {
		t.Fatalf("the broken file loads without an error:\n%s", want)
	}
	for _, sources := range []map[string][]byte{nil, read(t, names)} {
		p := New(names, sources)
		got := loaded(t, root, p.ParseFile)
		p.Stop()
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("load with the parser ahead (sources given: %v) differs (-without +with):\n%s", sources != nil, d)
		}
		if n := handed(p); n != len(names) {
			t.Errorf("sources given: %v: %d of %d files were parsed ahead; want all", sources != nil, n, len(names))
		}
	}
}

func TestChangedFileIsParsedFromTheLoadersBytes(t *testing.T) {
	root, names := module(t, 5, nil)
	want := loaded(t, root, nil)
	stale := read(t, names)
	stale[names[2]] = []byte("package pkg\n\nitems: stale: true\n")
	p := New(names, stale)
	got := loaded(t, root, p.ParseFile)
	p.Stop()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("a file whose bytes changed since it was read is parsed as read before (-want +got):\n%s", d)
	}
	if strings.Contains(got, "stale") {
		t.Errorf("the stale version of the file was loaded:\n%s", got)
	}
}

func TestSecondRequestGetsATreeOfItsOwn(t *testing.T) {
	root, names := module(t, 3, nil)
	p := New(names, nil)
	defer p.Stop()
	cfg := parser.NewConfig(parser.ParseComments)
	src := read(t, names)[names[0]]
	a, err := p.ParseFile(names[0], src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.ParseFile(names[0], src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if a == b {
		t.Error("two requests for one file got the same tree; a caller may change its own")
	}
	_ = root
}

func read(t *testing.T, names []string) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		m[n] = b
	}
	return m
}

func handed(p *Parser) int {
	n := 0
	for _, f := range p.files {
		if f.handed.Load() {
			n++
		}
	}
	return n
}

func TestHeader(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"package pkg\n\nitems: a: 1\n", "package pkg\n"},
		{"// Doc.\n@if(prod)\n\npackage pkg // trailing\n\nitems: a: 1\n", "// Doc.\n@if(prod)\n\npackage pkg\n"},
		{"items: a: 1\n", "\n"}, // no package clause: cue/load ignores it either way
		{"package pkg\n\nimport \"strings\"\n\nx: strings.ToUpper(\"a\")\n", ""}, // imports: handed whole
		{"package pkg import\n", ""}, // a header that does not parse
	} {
		got := Header("f.cue", []byte(tc.src))
		if string(got) != tc.want || (tc.want == "") != (got == nil) {
			t.Errorf("Header(%q) = %q, want %q", tc.src, got, tc.want)
		}
	}
}

// TestTreesAfterHeaders: a load handed the files' headers, with Trees'
// trees put in its instance, gives what a load of the files gives.
func TestTreesAfterHeaders(t *testing.T) {
	extra := map[string]string{}
	for i := range 30 {
		extra[fmt.Sprintf("pkg/h%03d.cue", i)] = fmt.Sprintf("// Header %d.\npackage pkg\n\n// Item %d.\nitems: h%d: {n: %d} // after\n", i, i, i, i)
	}
	extra["pkg/zz_no_package.cue"] = "items: orphan: 1\n"
	root, names := module(t, 3, extra)
	want := loaded(t, root, nil)
	sources := read(t, names)
	overlay := map[string]load.Source{}
	headers := 0
	for _, n := range names {
		h := Header(n, sources[n])
		if h == nil {
			h = sources[n]
		} else {
			headers++
		}
		overlay[n] = load.FromBytes(h)
	}
	if headers != 31 {
		t.Fatalf("%d files handed as headers, want 31 (those without imports)", headers)
	}
	got, ok := fromHeaders(root, names, sources, overlay, nil)
	if !ok {
		t.Fatal("Trees: not ok")
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("a load from headers with Trees' trees differs (-files +headers):\n%s", d)
	}

	// Started before the loader asks, with the configuration it asks
	// for (the module's language version, comments kept): the same;
	// with another, Trees reports false.
	module := parser.NewConfig(parser.ParseComments).Apply(parser.Version("v0.17.0"))
	got, ok = fromHeaders(root, names, sources, overlay, &module)
	if !ok {
		t.Fatal("Trees after Start with the loader's configuration: not ok")
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("a load from headers started ahead differs (-files +headers):\n%s", d)
	}
	for _, other := range []parser.Config{
		parser.NewConfig(parser.ParseComments).Apply(parser.Version("v0.9.0")),
		parser.NewConfig().Apply(parser.Version("v0.17.0")),
	} {
		if _, ok := fromHeaders(root, names, sources, overlay, &other); ok {
			t.Errorf("Trees after Start with %+v: ok, though the loader asked for %+v", other, module)
		}
	}

	// A file that does not parse: Trees says so (the loader, handed the
	// file, reports it).
	sources[names[0]] = []byte("package pkg\n\nitems: {\n")
	p := New(names, sources)
	p.ParseFile(names[1], sources[names[1]], parser.NewConfig(parser.ParseComments))
	p.Stop()
	if _, ok := p.Trees(); ok {
		t.Error("Trees: ok with a file that does not parse")
	}
	// No full parse asked for: no configuration to parse with.
	if _, ok := New(names, read(t, names)).Trees(); ok {
		t.Error("Trees: ok before the loader asked for a parse")
	}
}

// TestForget: after Forget the parser holds no tree (the trees it handed
// out are their holders' alone), files never parsed ahead (the parsing
// stopped first) do not make it wait, and a later request gets a tree of
// its own that reads as the file.
func TestForget(t *testing.T) {
	_, names := module(t, 40, nil)
	sources := read(t, names)
	p := New(names, sources)
	cfg := parser.NewConfig(parser.ParseComments)
	first, err := p.ParseFile(names[0], sources[names[0]], cfg)
	if err != nil {
		t.Fatal(err)
	}
	p.Stop() // most files are not parsed yet
	p.Forget()
	for _, f := range p.files {
		if f.tree != nil || f.src != nil {
			t.Fatalf("%s: the parser still holds its tree or source after Forget", f.name)
		}
	}
	again, err := p.ParseFile(names[0], sources[names[0]], cfg)
	if err != nil {
		t.Fatal(err)
	}
	if again == first {
		t.Error("a request after Forget got the tree handed before it")
	}
	got, _ := format.Node(again)
	want, _ := format.Node(first)
	if string(got) != string(want) {
		t.Errorf("the tree parsed after Forget reads\n%s\nwant\n%s", got, want)
	}
}

// fromHeaders loads root's package handed overlay (the files' headers)
// with a Parser (started ahead with start, if not nil) and describes it
// as loaded does, Trees' trees in place of the headers'; ok is Trees'.
func fromHeaders(root string, names []string, sources map[string][]byte, overlay map[string]load.Source, start *parser.Config) (string, bool) {
	p := New(names, sources)
	if start != nil {
		p.Start(*start)
	}
	insts := load.Instances([]string{"./pkg"}, &load.Config{Dir: root, Overlay: overlay, ParseFile: p.ParseFile})
	p.Stop()
	trees, ok := p.Trees()
	if !ok {
		return "", false
	}
	var b strings.Builder
	for _, inst := range insts {
		fmt.Fprintf(&b, "instance %s: err %v\n", inst.ImportPath, inst.Err)
		for i, f := range inst.Files {
			if tree := trees[f.Filename]; tree != nil {
				inst.Files[i] = tree
			}
			f = inst.Files[i]
			src, err := format.Node(f)
			fmt.Fprintf(&b, "file %s (%v, %d comment groups, %v):\n%s\n", f.Filename, f.Pos(), len(ast.Comments(f)), err, src)
		}
	}
	return b.String(), true
}
