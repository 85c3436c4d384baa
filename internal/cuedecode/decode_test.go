package cuedecode_test

import (
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	cueload "cuelang.org/go/cue/load"
	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/wlcdev/wlc/internal/cuedecode"
	"github.com/wlcdev/wlc/internal/testenv"
	"github.com/wlcdev/wlc/schema"
)

type upper string

func (u *upper) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*u = upper(strings.ToUpper(s))
	return nil
}

type Inner struct {
	N    int     `json:"n"`
	F    float64 `json:"f,omitempty"`
	Opt  string  `json:"opt,omitempty"`
	OptP *Inner  `json:"optp,omitempty"`
}

type Embedded struct {
	E string `json:"e"`
}

type withEmbedded struct {
	Embedded
	X int `json:"x"`
}

type outer struct {
	Name      string         `json:"name"`
	Untagged  string         // matched by its Go name
	Skipped   string         `json:"-"`
	Dash      string         `json:"-,"`
	unexp     string         //nolint:unused // must stay untouched
	Default   int            `json:"default"`
	Ptr       *Inner         `json:"ptr,omitempty"`
	NullPtr   *Inner         `json:"null_ptr,omitempty"`
	Flag      *bool          `json:"flag,omitempty"`
	List      []Inner        `json:"list"`
	Empty     []string       `json:"empty"`
	Ptrs      []*Inner       `json:"ptrs"`
	Map       map[string]any `json:"map"`
	Any       any            `json:"any"`
	Strs      map[string]string
	Upper     upper        `json:"upper"`
	Emb       withEmbedded `json:"emb"`
	Bytes     []byte       `json:"bytes"`
	Missing   string       `json:"missing"`
	OptScalar int          `json:"opt_scalar"`
}

const src = `
#Inner: {n: int | *7, f?: number, opt?: string, optp?: #Inner}
name:     "w"
Untagged: "u"
Skipped:  "no"
"-":      "dash"
Default:  int | *3
default:  int | *5
ptr:      #Inner & {opt: "o", optp: {n: 2}}
null_ptr: null
flag:     false
list: [#Inner & {f: 1.5}, #Inner & {n: 9}]
empty: []
ptrs: [{n: 1}]
map: {a: 1, b: 2.5, c: [1, "x", null], d: {e: true}, big: 12345678901234567890}
any: [{x: 1}]
Strs: {"k v": "1"}
upper: "shout"
emb: {e: "embedded", x: 4}
bytes: 'abc'
opt_scalar?: int
`

func TestDecodeMatchesCUE(t *testing.T) {
	ctx := cuecontext.New()
	v := ctx.CompileString(src)
	if err := v.Validate(cue.Concrete(true)); err != nil {
		t.Fatal(err)
	}
	var want, got outer
	want.unexp, got.unexp = "keep", "keep"
	if err := v.Decode(&want); err != nil {
		t.Fatal(err)
	}
	if err := cuedecode.Decode(v, &got); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(outer{}), cmp.Comparer(func(a, b *big.Int) bool { return a.Cmp(b) == 0 })); d != "" {
		t.Errorf("Decode differs from cue.Value.Decode (-cue +cuedecode):\n%s", d)
	}
	// The cases above must reach what they test.
	if got.Ptr == nil || got.Ptr.OptP == nil || got.Ptr.OptP.N != 2 || got.Ptr.N != 7 || got.Default != 5 ||
		got.Empty == nil || got.NullPtr != nil || got.Upper != "SHOUT" || got.Dash != "dash" || got.Skipped != "" ||
		got.Emb.E != "embedded" || string(got.Bytes) != "abc" || got.Map["big"] == nil {
		t.Errorf("decoded %+v", got)
	}
}

// TestDecodeWorkloads decodes every workload of the repository's
// packages (the bundled one, the e2e and recipe packages and every backend
// golden's) both ways: the loader relies on the results being the same.
func TestDecodeWorkloads(t *testing.T) {
	repo := testenv.RepoRoot(t)
	pkgs := map[string]map[string][]byte{} // name → files (module-relative)
	for _, dir := range []string{".", "testdata/e2e", "testdata/recipe-workloads"} {
		files := map[string][]byte{}
		cues, _ := filepath.Glob(filepath.Join(repo, dir, "workloads", "*.cue"))
		for _, f := range cues {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			files["workloads/"+filepath.Base(f)] = data
		}
		pkgs[dir] = files
	}
	archives, _ := filepath.Glob(filepath.Join(repo, "testdata", "backends", "*", "*.txtar"))
	for _, a := range archives {
		ar, err := txtar.ParseFile(a)
		if err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{}
		for _, f := range ar.Files {
			if strings.HasPrefix(f.Name, "workloads/") {
				files[f.Name] = f.Data
			}
		}
		pkgs[a] = files
	}
	ctx := cuecontext.New()
	n := 0
	for name, files := range pkgs {
		root := t.TempDir()
		files["cue.mod/module.cue"] = []byte("module: \"" + schema.ModulePath + "\"\nlanguage: version: \"v0.17.1\"\n")
		for f, data := range files {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, f), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.CopyFS(filepath.Join(root, "schema"), schema.Files); err != nil {
			t.Fatal(err)
		}
		insts := cueload.Instances([]string{"./workloads"}, &cueload.Config{Dir: root})
		if err := insts[0].Err; err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		it, err := ctx.BuildInstance(insts[0]).LookupPath(cue.ParsePath("workloads")).Fields()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for it.Next() {
			wv := it.Value()
			if wv.Validate(cue.Concrete(true), cue.Final()) != nil {
				continue // the loader does not decode it whole either (broken, or derived from a recipe)
			}
			var want, got schema.Workload
			if err := wv.Decode(&want); err != nil {
				t.Fatalf("%s: %s: %v", name, wv.Path(), err)
			}
			if err := cuedecode.Decode(wv, &got); err != nil {
				t.Fatalf("%s: %s: %v", name, wv.Path(), err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("%s: %s: Decode differs from cue.Value.Decode (-cue +cuedecode):\n%s", name, wv.Path(), d)
			}
			n++
		}
	}
	if n < 29+37 {
		t.Fatalf("decoded %d workloads, want at least the 29 bundled ones and one per backend golden", n)
	}
	t.Logf("%d workloads decoded alike", n)
}

// FuzzDecode decodes arbitrary workload files, typed by the schema and the
// bundled profiles, both ways: whenever a workload validates, the two
// decoders must give the same value (and either both fail or neither).
// The seeds are every workload file of the repository.
func FuzzDecode(f *testing.F) {
	repo := testenv.RepoRoot(f)
	seeds, _ := filepath.Glob(filepath.Join(repo, "workloads", "*.cue"))
	for _, s := range seeds {
		if b := filepath.Base(s); b == "wlc.cue" || b == "profiles.cue" || b == "settings.cue" {
			continue
		}
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	root := f.TempDir()
	for _, name := range []string{"wlc.cue", "profiles.cue", "settings.cue"} {
		data, err := os.ReadFile(filepath.Join(repo, "workloads", name))
		if err != nil {
			f.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(root, "workloads"), 0o755); err != nil {
			f.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "workloads", name), data, 0o644); err != nil {
			f.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "cue.mod"), 0o755); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "cue.mod", "module.cue"), []byte("module: \""+schema.ModulePath+"\"\nlanguage: version: \"v0.17.1\"\n"), 0o644); err != nil {
		f.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(root, "schema"), schema.Files); err != nil {
		f.Fatal(err)
	}
	inst := cueload.Instances([]string{"./workloads"}, &cueload.Config{Dir: root})[0]
	if inst.Err != nil {
		f.Fatal(inst.Err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx := cuecontext.New() // a context only grows
		pkg := ctx.BuildInstance(inst)
		in := ctx.CompileBytes(data)
		if in.Err() != nil {
			return
		}
		it, err := pkg.Unify(in).LookupPath(cue.ParsePath("workloads")).Fields()
		if err != nil {
			return
		}
		for it.Next() {
			wv := it.Value()
			if wv.Validate(cue.Concrete(true), cue.Final()) != nil {
				continue
			}
			var want, got schema.Workload
			errWant, errGot := wv.Decode(&want), cuedecode.Decode(wv, &got)
			if (errWant == nil) != (errGot == nil) {
				t.Fatalf("%s: cue.Value.Decode: %v; cuedecode: %v", wv.Path(), errWant, errGot)
			}
			if errWant != nil {
				continue
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("%s: Decode differs from cue.Value.Decode (-cue +cuedecode):\n%s", wv.Path(), d)
			}
		}
	})
}
