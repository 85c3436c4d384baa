package cuedecode_test

import (
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/cuecontext"
	cueload "cuelang.org/go/cue/load"
	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/wlcdev/wlc/internal/load/cuedecode"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
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

// numbers holds each edge case in an interface of its own: a map falls
// back to cue.Value.Decode whole when one of its numbers does.
type numbers struct {
	Div     any `json:"div"`
	Exp     any `json:"exp"`
	Tiny    any `json:"tiny"`
	TinyF   any `json:"tinyf"`
	Huge    any `json:"huge"`
	Pi      any `json:"pi"`
	NegZero any `json:"negzero"`
	Zero    any `json:"zero"`
	MinInt  any `json:"minint"`
	MaxInt  any `json:"maxint"`
	Neg     any `json:"neg"`
	L       any `json:"l"`
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
	Nums      numbers        `json:"nums"`
	NullAny   any            `json:"null_any"`
	EmptyMap  map[string]any `json:"empty_map"`
	Float     float64        `json:"float"`
	Upper     upper          `json:"upper"`
	Emb       withEmbedded   `json:"emb"`
	Bytes     []byte         `json:"bytes"`
	Missing   string         `json:"missing"`
	OptScalar int            `json:"opt_scalar"`
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
// Numbers at the edges of what int64 and float64 hold, as CUE writes
// them in JSON: a float computed from ints ("5.0"), exponents, an
// underflow, math.MinInt64 (which Value.Int64 refuses).
nums: {div: 10 / 2, exp: 1e3, tiny: 1e-400, tinyf: 1.5e-400, huge: 1e400, pi: 3.14159265358979323846264338327950288, negzero: -0.0, zero: 0.0, minint: -9223372036854775808, maxint: 9223372036854775807, neg: -7, l: [0.5, 2, [], {}]}
null_any: null
empty_map: {}
float: 10 / 4
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
	if d := cmp.Diff(want, got, cmp.AllowUnexported(outer{}), cmp.Comparer(func(a, b *big.Int) bool { return a.Cmp(b) == 0 }),
		cmp.Comparer(func(a, b *big.Float) bool { return a.Cmp(b) == 0 })); d != "" {
		t.Errorf("Decode differs from cue.Value.Decode (-cue +cuedecode):\n%s", d)
	}
	// The cases above must reach what they test.
	if got.Ptr == nil || got.Ptr.OptP == nil || got.Ptr.OptP.N != 2 || got.Ptr.N != 7 || got.Default != 5 ||
		got.Empty == nil || got.NullPtr != nil || got.Upper != "SHOUT" || got.Dash != "dash" || got.Skipped != "" ||
		got.Emb.E != "embedded" || string(got.Bytes) != "abc" || got.Map["big"] == nil ||
		got.Nums.Div != 5.0 || got.Nums.Tiny == nil || got.EmptyMap == nil || got.Float != 2.5 {
		t.Errorf("decoded %+v", got)
	}
}

// TestDecodeMapErrors: a value a map of strings cannot hold fails as it
// fails cue.Value.Decode, with its error.
func TestDecodeMapErrors(t *testing.T) {
	v := cuecontext.New().CompileString(`{a: "x", b: 1}`)
	var want, got map[string]string
	errWant, errGot := v.Decode(&want), cuedecode.Decode(v, &got)
	if errWant == nil || errGot == nil || errWant.Error() != errGot.Error() {
		t.Errorf("cue.Value.Decode: %v; cuedecode: %v", errWant, errGot)
	}
}

// TestDecodeWorkloads decodes every workload of the repository's
// packages (the bundled one, the e2e and recipe packages and every backend
// golden's) both ways: the loader relies on the results being the same.
func TestDecodeWorkloads(t *testing.T) {
	repo := testenv.RepoRoot(t)
	pkgs := map[string]map[string][]byte{} // name → workloads/ files
	for _, dir := range []string{".", "testdata/e2e", "testdata/recipe-workloads"} {
		pkgs[dir] = workloadFiles(t, filepath.Join(repo, dir, "workloads"))
	}
	archives, _ := filepath.Glob(filepath.Join(repo, "testdata", "backends", "*", "*.txtar"))
	for _, a := range archives {
		ar, err := txtar.ParseFile(a)
		if err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{}
		for _, f := range ar.Files {
			if name, ok := strings.CutPrefix(f.Name, "workloads/"); ok {
				files[name] = f.Data
			}
		}
		pkgs[a] = files
	}
	ctx := cuecontext.New()
	n := 0
	for name, files := range pkgs {
		it, err := ctx.BuildInstance(workloadsInstance(t, files)).LookupPath(cue.ParsePath("workloads")).Fields()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for it.Next() {
			// A workload that does not validate is not decoded whole by the
			// loader either (broken, or derived from a recipe).
			if compareDecode(t, it.Value()) {
				n++
			}
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
	bundled := workloadFiles(f, filepath.Join(testenv.RepoRoot(f), "workloads"))
	shared := map[string][]byte{}
	for name, data := range bundled {
		if name == "wlc.cue" || name == "profiles.cue" || name == "settings.cue" {
			shared[name] = data
		} else {
			f.Add(data)
		}
	}
	inst := workloadsInstance(f, shared)
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx := cuecontext.New() // a context only grows
		in := ctx.CompileBytes(data)
		if in.Err() != nil {
			return
		}
		it, err := ctx.BuildInstance(inst).Unify(in).LookupPath(cue.ParsePath("workloads")).Fields()
		if err != nil {
			return
		}
		for it.Next() {
			compareDecode(t, it.Value())
		}
	})
}

// compareDecode decodes wv both ways when it validates, failing t when
// the two differ (in value, or in failing); it reports whether wv
// validated.
func compareDecode(t *testing.T, wv cue.Value) bool {
	t.Helper()
	if wv.Validate(cue.Concrete(true), cue.Final()) != nil {
		return false
	}
	var want, got schema.Workload
	errWant, errGot := wv.Decode(&want), cuedecode.Decode(wv, &got)
	if (errWant == nil) != (errGot == nil) {
		t.Fatalf("%s: cue.Value.Decode: %v; cuedecode: %v", wv.Path(), errWant, errGot)
	}
	if d := cmp.Diff(want, got); errWant == nil && d != "" {
		t.Errorf("%s: Decode differs from cue.Value.Decode (-cue +cuedecode):\n%s", wv.Path(), d)
	}
	return true
}

// workloadFiles reads dir's .cue files, by name.
func workloadFiles(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "*.cue"))
	files := map[string][]byte{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(p)] = data
	}
	return files
}

// workloadsInstance writes files as the workloads package of a module
// beside the embedded schema (module github.com/wlcdev/wlc, as the
// repository's and the goldens' are) and loads it.
func workloadsInstance(t testing.TB, files map[string][]byte) *build.Instance {
	t.Helper()
	root := t.TempDir()
	write := func(name string, data []byte) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("cue.mod/module.cue", []byte("module: \""+schema.ModulePath+"\"\nlanguage: version: \"v0.17.1\"\n"))
	for name, data := range files {
		write(filepath.Join("workloads", name), data)
	}
	if err := os.CopyFS(filepath.Join(root, "schema"), schema.Files); err != nil {
		t.Fatal(err)
	}
	inst := cueload.Instances([]string{"./workloads"}, &cueload.Config{Dir: root})[0]
	if inst.Err != nil {
		t.Fatal(inst.Err)
	}
	return inst
}
