package schema_test

import (
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/format"

	"github.com/wlcdev/wlc/internal/testrig/testenv"
	"github.com/wlcdev/wlc/schema"
)

const enumsFile = "enums_gen.cue"

// enumUse is a reference to a generated enum constant: _enumRE.Engines,
// _joined.Precisions, _orJoin.QuotedEngines.
var enumUse = regexp.MustCompile(`\b_(enumRE|joined|orJoin)\.([A-Za-z0-9]+)`)

// TestEnumsCUE regenerates schema/enums_gen.cue, the regexps and joined
// lists the schema reads by name (_enumRE.X, _joined.X, _orJoin.X), from
// the enum lists (#X; _orJoin.QuotedX quotes #X's values), and fails when
// the committed file differs (WLC_UPDATE=1 rewrites it). Written in CUE
// the same joins were evaluated again in every cue.Context (each shard of
// a large package) and in every workload whose message or type read them:
// 5% of a cold vet's instructions.
func TestEnumsCUE(t *testing.T) {
	uses := map[string][]string{}
	lists := enumLists(t)
	err := fs.WalkDir(schema.Files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == enumsFile {
			return err
		}
		src, err := fs.ReadFile(schema.Files, p)
		for _, m := range enumUse.FindAllStringSubmatch(string(src), -1) {
			uses[m[1]] = append(uses[m[1]], m[2])
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	list := func(name string) []string {
		t.Helper()
		l, ok := lists[name]
		if !ok {
			t.Fatalf("the schema reads an enum constant of #%s, which it does not declare as a list of strings", name)
		}
		return l
	}
	var b strings.Builder
	b.WriteString("// Code generated from the schema's enum lists by TestEnumsCUE\n")
	b.WriteString("// (WLC_UPDATE=1 go test ./schema); DO NOT EDIT.\n\n")
	b.WriteString("package schema\n\n")
	b.WriteString("// _enumRE holds the regexp matching exactly the values of each enum list\n")
	b.WriteString("// (#X), an enum's type: string & =~_enumRE.X (see workload.cue).\n")
	b.WriteString("_enumRE: {\n")
	for _, n := range sortedUnique(uses["enumRE"]) {
		quoted := slices.Clone(list(n))
		for i, v := range quoted {
			quoted[i] = regexp.QuoteMeta(v)
		}
		fmt.Fprintf(&b, "\t%s: %q\n", n, "^(?:"+strings.Join(quoted, "|")+")$")
	}
	b.WriteString("}\n\n")
	b.WriteString("// _joined holds each enum list as \"a, b, c\", for messages.\n")
	b.WriteString("_joined: {\n")
	for _, n := range sortedUnique(uses["joined"]) {
		fmt.Fprintf(&b, "\t%s: %q\n", n, strings.Join(list(n), ", "))
	}
	b.WriteString("}\n\n")
	b.WriteString("// _orJoin holds each enum list as \"a, b or c\" (QuotedX: \"\\\"a\\\" or \\\"b\\\"\"),\n")
	b.WriteString("// for messages.\n")
	b.WriteString("_orJoin: {\n")
	for _, n := range sortedUnique(uses["orJoin"]) {
		vs := slices.Clone(list(strings.TrimPrefix(n, "Quoted")))
		if strings.HasPrefix(n, "Quoted") {
			for i, v := range vs {
				vs[i] = `"` + v + `"`
			}
		}
		joined := vs[len(vs)-1]
		if len(vs) > 1 {
			joined = strings.Join(vs[:len(vs)-1], ", ") + " or " + joined
		}
		fmt.Fprintf(&b, "\t%s: %q\n", n, joined)
	}
	b.WriteString("}\n")
	got, err := format.Source([]byte(b.String()))
	if err != nil {
		t.Fatalf("generated %s does not parse: %v\n%s", enumsFile, err, b.String())
	}
	testenv.Generated(t, "schema/"+enumsFile, got, "WLC_UPDATE=1 go test ./schema -run TestEnumsCUE (from the schema's enum lists)")
}

// enumLists evaluates the schema without the generated file (its names
// declared open, so a stale or missing file cannot stop the generator) and
// returns every top-level definition that is a list of strings, by name
// without the #.
func enumLists(t *testing.T) map[string][]string {
	t.Helper()
	files := fstest.MapFS{"open.cue": {Data: []byte("package schema\n\n_enumRE: [string]: string\n_joined: [string]: string\n_orJoin: [string]: string\n")}}
	names, err := fs.Glob(schema.Files, "*.cue")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if n == enumsFile {
			continue
		}
		src, err := fs.ReadFile(schema.Files, n)
		if err != nil {
			t.Fatal(err)
		}
		files[n] = &fstest.MapFile{Data: src}
	}
	inst, err := schema.EmbeddedInstance(files, schema.ImportPath, "schema", "schema/")
	if err != nil {
		t.Fatal(err)
	}
	v := cuecontext.New().BuildInstance(inst)
	if err := v.Err(); err != nil {
		t.Fatalf("the schema without %s does not build: %v", enumsFile, err)
	}
	lists := map[string][]string{}
	it, err := v.Fields(cue.Definitions(true))
	if err != nil {
		t.Fatal(err)
	}
	for it.Next() {
		sel := it.Selector()
		if !sel.IsDefinition() || it.Value().IncompleteKind() != cue.ListKind {
			continue
		}
		var l []string
		if it.Value().Decode(&l) == nil && len(l) > 0 {
			lists[strings.TrimPrefix(sel.String(), "#")] = l
		}
	}
	return lists
}

func sortedUnique(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}
