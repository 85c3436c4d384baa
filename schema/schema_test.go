package schema_test

import (
	"encoding/json"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	cueload "cuelang.org/go/cue/load"

	"github.com/wlcdev/wlc/internal/load"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
	"github.com/wlcdev/wlc/schema"
)

// mirrors pairs every CUE definition the loader decodes with its Go type.
var mirrors = map[string]any{
	"#Workload":            schema.Workload{},
	"#RecipeRef":           schema.RecipeRef{},
	"#Serve":               schema.Serve{},
	"#LMEval":              schema.LMEval{},
	"#LMEvalTask":          schema.LMEvalTask{},
	"#VLLMBench":           schema.VLLMBench{},
	"#BenchConfig":         schema.BenchConfig{},
	"#AllowFailedRequests": schema.AllowFailedRequests{},
	"#SGLangServe":         schema.SGLangServe{},
	"#SGLangBench":         schema.SGLangBench{},
	"#SGLangBenchConfig":   schema.SGLangBenchConfig{},
	"#BFCL":                schema.BFCL{},
	"#Disagg":              schema.Disagg{},
	"#DisaggRole":          schema.DisaggRole{},
	"#KVTransfer":          schema.KVTransfer{},
	"#Router":              schema.Router{},
	"#BenchSweep":          schema.BenchSweep{},
	"#SweepShape":          schema.SweepShape{},
	"#ConcurrencyLadder":   schema.ConcurrencyLadder{},
	"#IdleGPUs":            schema.IdleGPUs{},
	"#BackendSweep":        schema.BackendSweep{},
	"#CustomStep":          schema.CustomStep{},
	"#Profile":             schema.Profile{},
	"#K8s":                 schema.K8s{},
	"#DockerHost":          schema.DockerHost{},
	"#SlurmCluster":        schema.SlurmCluster{},
	"#Pyxis":               schema.Pyxis{},
	"#Mount":               schema.Mount{},
	"#Hardware":            schema.Hardware{},
	"#ArchitectureFacts":   schema.ArchitectureFacts{},
	"#Support":             schema.Support{},
	"#Settings":            schema.Settings{},
	"#VLLMFlagsSettings":   schema.VLLMFlagsSettings{},
	"#FlagCatalog":         schema.FlagCatalog{},
	"#ExtraOption":         schema.ExtraOption{},
}

// buildSchema compiles the embedded schema as the CUE package it is, in
// a scratch module, so the test sees exactly what the binary embeds.
func buildSchema(t *testing.T, ctx *cue.Context) cue.Value {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "cue.mod"), 0o755); err != nil {
		t.Fatal(err)
	}
	mod := "module: \"" + schema.ModulePath + "\"\nlanguage: version: \"v0.17.1\"\n"
	if err := os.WriteFile(filepath.Join(root, "cue.mod", "module.cue"), []byte(mod), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(root, "schema"), schema.Files); err != nil {
		t.Fatal(err)
	}
	insts := cueload.Instances([]string{"./schema"}, &cueload.Config{Dir: root})
	if err := insts[0].Err; err != nil {
		t.Fatalf("embedded schema does not load: %v", err)
	}
	v := ctx.BuildInstance(insts[0])
	if err := v.Validate(); err != nil {
		t.Fatalf("embedded schema does not compile: %v", err)
	}
	return v
}

func TestSchemaCompiles(t *testing.T) {
	v := buildSchema(t, cuecontext.New())
	for def := range mirrors {
		if !v.LookupPath(cue.ParsePath(def)).Exists() {
			t.Errorf("schema lacks %s", def)
		}
	}
	n := 0
	fs.WalkDir(schema.Files, ".", func(p string, d fs.DirEntry, err error) error {
		if strings.HasSuffix(p, ".cue") {
			n++
		}
		return err
	})
	if n == 0 {
		t.Fatal("no .cue files embedded")
	}
	// The recipes schema is a package of its own: loading workloads must
	// not evaluate it.
	for _, def := range []string{"#Recipe", "#Strategy", "#Taxonomy", "recipe_hardware"} {
		if v.LookupPath(cue.ParsePath(def)).Exists() {
			t.Errorf("the workload schema defines %s; it belongs to schema/recipe", def)
		}
	}
}

// goKinds is the set of CUE kinds a Go type decodes.
func goKinds(t reflect.Type) cue.Kind {
	if t == reflect.TypeOf(schema.IntOrList{}) {
		return cue.IntKind | cue.ListKind
	}
	if t == reflect.TypeOf(schema.Concurrency{}) {
		return cue.ListKind | cue.StructKind
	}
	switch t.Kind() {
	case reflect.Pointer:
		return goKinds(t.Elem()) | cue.NullKind
	case reflect.Interface:
		return cue.TopKind
	case reflect.String:
		return cue.StringKind
	case reflect.Bool:
		return cue.BoolKind
	case reflect.Int, reflect.Int64, reflect.Int32:
		return cue.IntKind
	case reflect.Float64, reflect.Float32:
		return cue.NumberKind
	case reflect.Map, reflect.Struct:
		return cue.StructKind
	case reflect.Slice:
		return cue.ListKind
	}
	return cue.BottomKind
}

type goField struct {
	name      string
	typ       reflect.Type
	omitEmpty bool
}

func goFields(t reflect.Type) map[string]goField {
	out := map[string]goField{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		out[name] = goField{name: f.Name, typ: f.Type, omitEmpty: strings.Contains(opts, "omitempty")}
	}
	return out
}

// TestSchemaMirror keeps schema/types.go in step with the CUE
// definitions: the same json names, compatible kinds, and an optional CUE
// field never encodes as a zero value (omitempty or a pointer).
func TestSchemaMirror(t *testing.T) {
	v := buildSchema(t, cuecontext.New())
	// The fields a block's or field's type depends on (#OnEngine,
	// #OnRuntime, #OnDataset), with their values.
	choices := map[string][]string{}
	for field, list := range map[string]string{"engine": "#Engines", "runtime": "#Runtimes", "dataset": "#VLLMBenchDatasets"} {
		var values []string
		if err := v.LookupPath(cue.ParsePath(list)).Decode(&values); err != nil || len(values) == 0 {
			t.Fatalf("%s: %v (%d values)", list, err, len(values))
		}
		choices[field] = values
	}
	defs := make([]string, 0, len(mirrors))
	for d := range mirrors {
		defs = append(defs, d)
	}
	sort.Strings(defs)
	for _, def := range defs {
		t.Run(def, func(t *testing.T) {
			dv := v.LookupPath(cue.ParsePath(def))
			gt := reflect.TypeOf(mirrors[def])
			gfs := goFields(gt)
			it, err := dv.Fields(cue.Optional(true))
			if err != nil {
				t.Fatalf("cannot list %s: %v", def, err)
			}
			seen := map[string]bool{}
			for it.Next() {
				sel := it.Selector()
				name := strings.TrimRight(sel.String(), "?!")
				seen[name] = true
				gf, ok := gfs[name]
				if !ok {
					t.Errorf("%s.%s has no Go field in %s (json:%q)", def, name, gt.Name(), name)
					continue
				}
				ck := choiceKind(dv, choices, sel, it.Value())
				if gk := goKinds(gf.typ); ck&^gk != 0 {
					t.Errorf("%s.%s is %v in CUE but %s.%s (%v) decodes only %v", def, name, ck, gt.Name(), gf.name, gf.typ, gk)
				}
				if sel.ConstraintType() == cue.OptionalConstraint && !gf.omitEmpty && gf.typ.Kind() != reflect.Pointer {
					t.Errorf("%s.%s is optional but %s.%s has no omitempty: encoding would set it", def, name, gt.Name(), gf.name)
				}
			}
			for name, gf := range gfs {
				if !seen[name] {
					t.Errorf("%s.%s (json:%q) has no field in %s", gt.Name(), gf.name, name, def)
				}
			}
		})
	}
}

// choiceKind is the kind of field sel of dv (its value fv). A block whose
// type depends on a field of dv (#OnEngine, #OnRuntime, #OnDataset: the
// block's definition for one engine, runtime or dataset, a refusal, which
// takes any value, for the others) has the kinds every value of that field allows.
func choiceKind(dv cue.Value, choices map[string][]string, sel cue.Selector, fv cue.Value) cue.Kind {
	ck := fv.IncompleteKind() &^ cue.BottomKind
	for field, values := range choices {
		if !dv.LookupPath(cue.MakePath(cue.Str(field))).Exists() && !dv.LookupPath(cue.MakePath(cue.Str(field).Required())).Exists() {
			continue
		}
		for _, x := range values {
			xv := dv.FillPath(cue.MakePath(cue.Str(field)), x).LookupPath(cue.MakePath(sel))
			ck &= xv.IncompleteKind() &^ cue.BottomKind
		}
	}
	return ck
}

// TestRoundTrip decodes every bundled workload, encodes it back with
// ctx.Encode and checks it still unifies with #Workload: a Go field that
// is dropped, renamed or mistyped fails here.
func TestRoundTrip(t *testing.T) {
	repo := testenv.RepoRoot(t)
	ctx := cuecontext.New()
	r := load.Load(ctx, filepath.Join(repo, "workloads"), repo)
	if r.Diags.HasErrors() {
		t.Fatalf("bundled workloads do not vet:\n%v", r.Diags)
	}
	if len(r.Workloads) == 0 {
		t.Fatal("no bundled workloads")
	}
	sch := buildSchema(t, ctx)
	profiles := ctx.Encode(r.Profiles)
	names := slices.Sorted(maps.Keys(r.Profiles))
	def := sch.LookupPath(cue.ParsePath("#Workload")).FillPath(cue.MakePath(cue.Def("profileNames")), names)
	for _, w := range r.Workloads {
		enc := ctx.Encode(w.Workload)
		if err := enc.Err(); err != nil {
			t.Errorf("%s: encode: %v", w.Name, err)
			continue
		}
		u := def.FillPath(cue.MakePath(cue.Def("profile")), profiles.LookupPath(cue.MakePath(cue.Str(w.Profile)))).Unify(enc)
		if err := u.Validate(cue.Concrete(true), cue.Final()); err != nil {
			t.Errorf("%s: encoded Go value does not unify with #Workload: %v", w.Name, err)
			continue
		}
		var back schema.Workload
		if err := u.Decode(&back); err != nil {
			t.Errorf("%s: decode again: %v", w.Name, err)
			continue
		}
		if got, want := jsonOf(t, back), jsonOf(t, w.Workload); got != want {
			t.Errorf("%s: round trip changed the workload:\n got %s\nwant %s", w.Name, got, want)
		}
	}
	// Profiles too: each encodes and unifies with #Profile.
	pdef := sch.LookupPath(cue.ParsePath("#Profile"))
	for name, p := range r.Profiles {
		if err := pdef.Unify(ctx.Encode(p)).Validate(cue.Concrete(true), cue.Final()); err != nil {
			t.Errorf("profile %s: encoded Go value does not unify with #Profile: %v", name, err)
		}
	}
}

// jsonOf is v as JSON, the form in which decoded numbers (int or float64
// inside an any) compare equal.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(x)
	return string(b)
}

// TestK8sHFHome: a pod's HF cache is profile data. A k8s profile that
// names none gets the vLLM images' own cache directory (backed by the
// hf-cache volume), one that names one keeps it, and other runtimes get
// no default (docker and Slurm mount HF_HOME from the host, so an
// invented path would be created there).
func TestK8sHFHome(t *testing.T) {
	ctx := cuecontext.New()
	v := buildSchema(t, ctx)
	for _, c := range []struct{ src, want string }{
		{`{name: "P", hardware: "B200", runtime: "k8s", queue: "q", k8s: plugin: "nvidia"}`, "/root/.cache/huggingface"},
		{`{name: "P", hardware: "MI355X", runtime: "k8s", queue: "q", k8s: plugin: "amd"}`, "/root/.cache/huggingface"},
		{`{name: "P", hardware: "B200", runtime: "k8s", queue: "q", k8s: plugin: "nvidia", hf_home: "/data/hf"}`, "/data/hf"},
		{`{name: "P", hardware: "H200", runtime: "docker", queue: "q"}`, ""},
	} {
		p := v.LookupPath(cue.ParsePath("#Profile")).Unify(ctx.CompileString(c.src))
		var got schema.Profile
		if err := p.Decode(&got); err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		if got.HFHome != c.want {
			t.Errorf("%s: hf_home = %q, want %q", c.src, got.HFHome, c.want)
		}
	}
}
