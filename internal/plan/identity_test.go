package plan

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/wlcdev/wlc/schema"
)

func identitySample() Workload {
	return Workload{
		Name: "llama_h200", RunName: "llama-h200", Description: "a job", File: "workloads/a.cue",
		Profile:  schema.Profile{Name: "H200", Hardware: "H200", Runtime: "docker", Queue: "h200"},
		Hardware: schema.Hardware{Name: "H200", GPUsPerNode: 8},
		Platform: "cuda", Nodes: 1, GPUsPerNode: 8, GPUs: 8, Engine: "vllm",
		Model: "meta-llama/Llama-3.1-8B", Precision: "bf16",
		Image:       Image{Ref: "vllm/vllm-openai:v0.11.0", Pull: "vllm/vllm-openai:v0.11.0", Source: "profile"},
		Env:         []EnvVar{{Name: "HF_HOME", Value: "/data/hf"}},
		Serve:       Serve{Command: []string{"vllm", "serve"}, Args: []string{"meta-llama/Llama-3.1-8B", "--tensor-parallel-size", "8"}, TensorParallelSize: 8},
		Bench:       []BenchRun{{Name: "1k-conc-8", Args: []string{"--max-concurrency", "8"}, RunFiles: []string{"bench-1k-conc-8.json"}, Result: "bench-1k-conc-8.json"}},
		ResultsPath: "results/llama-h200", TimeoutMinutes: 120,
	}
}

func mustHash(t *testing.T, w Workload) string {
	t.Helper()
	h, err := JobHash(w)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// The printed hash is versioned and short; the same plan always hashes
// the same (the bundled workloads' hashes are pinned by
// testdata/script/port_list.txtar, across machines).
func TestJobHashShape(t *testing.T) {
	w := identitySample()
	h := mustHash(t, w)
	if !regexp.MustCompile(`^v1-[0-9a-f]{12}$`).MatchString(h) {
		t.Fatalf("JobHash = %q, want v1- and 12 hex digits", h)
	}
	for range 3 {
		if again := mustHash(t, identitySample()); again != h {
			t.Fatalf("JobHash changed between runs: %s, then %s", h, again)
		}
	}
	full, err := FullJobHash(w)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(h, full[:ShortHashLen]) || len(full) != 64 {
		t.Errorf("FullJobHash %q does not extend JobHash %q", full, h)
	}
}

// A renamed job, moved to another file, redescribed or made nightly, is
// the same job.
func TestJobHashIgnoresLabels(t *testing.T) {
	w := identitySample()
	want := mustHash(t, w)
	w.Name, w.RunName, w.File, w.Description = "other", "other-run", "workloads/sub/b.cue", "prose"
	w.ResultsPath, w.Nightly = "results/other-run", true
	w.Recipe = &RecipeOrigin{Recipe: "vllm-project/recipes", File: "models/x.yaml"}
	w.Profile.Name = "H200_RENAMED"
	if got := mustHash(t, w); got != want {
		t.Errorf("a relabelled job hashes %s, want %s (labels must not change the identity)", got, want)
	}
	data, err := IdentityJSON(w)
	if err != nil {
		t.Fatal(err)
	}
	for _, label := range []string{`"other"`, `"name":"H200_RENAMED"`, `"file"`, `"run_name"`, `"results_dir"`, `"nightly"`, `"recipe"`, "prose"} {
		if strings.Contains(string(data), label) {
			t.Errorf("the identity encoding holds the label %s: %s", label, data)
		}
	}
}

// Every plan field that is not a label is in the hash: changing any of
// them (at any depth reached from the top) changes it. A field added to
// Workload later is covered without a change here, and is in the hash
// unless identityLabels says otherwise.
func TestJobHashCoversEveryField(t *testing.T) {
	base := identitySample()
	want := mustHash(t, base)
	labels := map[string]bool{}
	vt := reflect.TypeFor[identityView]()
	for i := range vt.NumField() {
		if f := vt.Field(i); !f.Anonymous {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			labels[name] = true
		}
	}
	rt := reflect.TypeFor[Workload]()
	covered := 0
	for i := range rt.NumField() {
		f := rt.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || labels[name] {
			continue
		}
		w := identitySample()
		perturb(reflect.ValueOf(&w).Elem().Field(i))
		if got := mustHash(t, w); got == want {
			t.Errorf("changing %s (%s) left the hash %s: the field is not in the identity", f.Name, name, got)
		}
		covered++
	}
	if covered < 30 {
		t.Errorf("only %d fields checked; the reflection walk lost its way", covered)
	}
	// A field inside a nested object counts as well: the serve argv, an
	// env value, a bench run's result file, the profile's queue.
	for name, change := range map[string]func(*Workload){
		"serve.args":           func(w *Workload) { w.Serve.Args[2] = "4" },
		"env value":            func(w *Workload) { w.Env[0].Value = "/other" },
		"bench result file":    func(w *Workload) { w.Bench[0].Result = "x.json" },
		"profile queue":        func(w *Workload) { w.Profile.Queue = "h200-canary" },
		"image ref":            func(w *Workload) { w.Image.Ref = "vllm/vllm-openai:v0.12.0" },
		"bench argv reordered": func(w *Workload) { slices.Reverse(w.Bench[0].Args) },
	} {
		w := identitySample()
		change(&w)
		if got := mustHash(t, w); got == want {
			t.Errorf("%s changed, hash stayed %s", name, got)
		}
	}
}

// perturb changes v so that its JSON encoding changes.
func perturb(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Int:
		v.SetInt(v.Int() + 1)
	case reflect.Float64:
		v.SetFloat(v.Float() + 1)
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Slice:
		v.Set(reflect.Append(v, reflect.Zero(v.Type().Elem())))
	case reflect.Map:
		if v.IsNil() {
			v.Set(reflect.MakeMap(v.Type()))
		}
		v.SetMapIndex(reflect.ValueOf("wlc_test_key"), reflect.Zero(v.Type().Elem()))
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
			return
		}
		perturb(v.Elem())
	case reflect.Struct:
		// The struct's first encoded field besides a name (profile.name is
		// a label).
		for i := range v.NumField() {
			tag, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
			if tag != "-" && tag != "name" && v.Type().Field(i).IsExported() {
				perturb(v.Field(i))
				return
			}
		}
	}
}

// BenchmarkJobHash is what hashing costs each script and step of an
// export (a bundled workload's plan is a few KB of JSON).
func BenchmarkJobHash(b *testing.B) {
	w := identitySample()
	for b.Loop() {
		if _, err := JobHash(w); err != nil {
			b.Fatal(err)
		}
	}
}
