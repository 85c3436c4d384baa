package workloads_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"cuelang.org/go/cue/cuecontext"
	"gopkg.in/yaml.v3"

	"github.com/wlcdev/wlc/internal/load"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// ported are the perf-eval workloads ported to this directory, keyed by
// the corpus file stem (which is also the workload name): the 27
// main-line workloads of perf-eval.md §6 and two branch seeds. gpus is set
// where the port deliberately reserves a different GPU count than the
// original's num_gpus (each such original is kept, literally, in
// testdata/script/vet_original_<stem>.txtar).
var ported = map[string]struct {
	gpus int
	why  string
}{
	"deepseek_v4_1_flash_mi355x":    {4, "TP4 on 8 reserved GPUs"},
	"deepseek_v4_flash_b200":        {},
	"deepseek_v4_pro_5_h200":        {},
	"deepseek_v4_pro_mi355x":        {},
	"gemma_4_31b_it_h200":           {1, "TP1 on 8 reserved GPUs"},
	"glm_5_1_h200":                  {},
	"glm_5_2_mi355x":                {},
	"glm_5_3_flash_mi355x":          {},
	"glm_5_3_flash_mxfp4_mi355x":    {},
	"glm_5_3_h200":                  {},
	"gpt_oss_120b_b200":             {},
	"gpt_oss_120b_h200":             {4, "TP4 (vllm#40838 shape) on 8 reserved GPUs"},
	"gpt_oss_120b_mi355x":           {1, "TP1 on 8 reserved GPUs"},
	"kimi_k2_5_h200":                {},
	"kimi_k2_5_mi300x":              {},
	"kimi_k2_5_mi355x":              {},
	"kimi_k3_mi355x":                {},
	"minimax_m2_5_h200":             {4, "TP4+EP on 8 reserved GPUs"},
	"minimax_m2_5_mi300x":           {},
	"minimax_m2_5_mi355x":           {4, "TP4+EP on 8 reserved GPUs"},
	"minimax_m3_b200":               {},
	"minimax_m3_h200":               {},
	"minimax_m3_mi355x":             {4, "TP4 on 8 reserved GPUs"},
	"nemotron_3_super_5_h200":       {},
	"qwen3_5_b200":                  {},
	"qwen3_5_h200":                  {},
	"qwen3_5_mi355x":                {},
	"deepseek_v4_pro_b200":          {},
	"deepseek_v4_flash_gb300_slurm": {},
}

// original is the part of a perf-eval workload YAML the port must keep.
type original struct {
	Name             string `yaml:"name"`
	GPU              string `yaml:"gpu"`
	NumGPUs          int    `yaml:"num_gpus"`
	NumNodes         int    `yaml:"num_nodes"`
	GPUsPerNode      int    `yaml:"gpus_per_node"`
	Nightly          bool   `yaml:"nightly"`
	BenchOnly        bool   `yaml:"bench_only"`
	TimeoutInMinutes int    `yaml:"timeout_in_minutes"`
	VLLM             struct {
		Model           string         `yaml:"model"`
		Env             map[string]any `yaml:"env"`
		ServeArgs       string         `yaml:"serve_args"`
		StartupTimeoutS int            `yaml:"startup_timeout_s"`
	} `yaml:"vllm"`
	LMEval *struct {
		Tasks []struct {
			Name       string `yaml:"name"`
			NumFewshot int    `yaml:"num_fewshot"`
		} `yaml:"tasks"`
	} `yaml:"lm_eval"`
	VLLMBench *struct {
		Configs []struct {
			Name           string         `yaml:"name"`
			Backend        string         `yaml:"backend"`
			InputLen       int            `yaml:"input_len"`
			OutputLen      int            `yaml:"output_len"`
			NumPrompts     any            `yaml:"num_prompts"`
			MaxConcurrency any            `yaml:"max_concurrency"`
			Repetitions    int            `yaml:"repetitions"`
			Args           map[string]any `yaml:"args"`
		} `yaml:"configs"`
	} `yaml:"vllm_bench"`
	BFCL *struct {
		TestCategories   []string `yaml:"test_categories"`
		MaximumStepLimit int      `yaml:"maximum_step_limit"`
		MaxTestCases     any      `yaml:"max_test_cases"`
	} `yaml:"bfcl"`
}

// TestPortKeepsOriginals checks, for every ported corpus YAML, that the
// resolved port kept the model, nightly, GPU count (or its documented fix),
// environment, every serve flag and the eval blocks.
func TestPortKeepsOriginals(t *testing.T) {
	corpus := filepath.Join(testenv.SharedDir(t), "corpus", "perf-eval", "workloads")
	repo := testenv.RepoRoot(t)
	r := load.Load(cuecontext.New(), filepath.Join(repo, "workloads"), repo)
	if r.Diags.HasErrors() {
		var b strings.Builder
		r.Diags.WriteText(&b)
		t.Fatalf("workloads do not load:\n%s", b.String())
	}

	for _, w := range r.Workloads {
		if _, ok := ported[w.Name]; !ok {
			t.Errorf("workload %s (%s) is not in the ported table of port_test.go; add it with its corpus stem", w.Name, w.File)
		}
	}

	for _, stem := range sortedStems() {
		fix := ported[stem]
		t.Run(stem, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(corpus, stem+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			var o original
			if err := yaml.Unmarshal(data, &o); err != nil {
				t.Fatalf("%s.yaml: %v", stem, err)
			}
			w, ok := r.Workload(stem)
			if !ok {
				t.Fatalf("no workload %s in workloads/ (want workloads/%s.cue)", stem, stem)
			}
			if want := "workloads/" + stem + ".cue"; w.File != want {
				t.Errorf("defined in %s, want %s", w.File, want)
			}
			p, err := r.Resolve(w, plan.Overrides{})
			if err != nil {
				t.Fatal(err)
			}

			// The dashboards key eval rows by perf-eval's name.
			if want := cmp.Or(o.Name, stem); p.Ingest.Workload != want {
				t.Errorf("the dashboards' name is %q, perf-eval's name %q", p.Ingest.Workload, want)
			}
			if p.Model != o.VLLM.Model {
				t.Errorf("model %q, original %q", p.Model, o.VLLM.Model)
			}
			if p.Nightly != o.Nightly {
				t.Errorf("nightly %v, original %v", p.Nightly, o.Nightly)
			}
			if p.BenchOnly != o.BenchOnly {
				t.Errorf("bench_only %v, original %v", p.BenchOnly, o.BenchOnly)
			}
			if w.Profile != o.GPU {
				t.Errorf("profile %s, original gpu %s", w.Profile, o.GPU)
			}
			checkGPUs(t, o, p, fix.gpus, fix.why)
			if want := orDefault(o.TimeoutInMinutes, 120); p.TimeoutMinutes != want {
				t.Errorf("timeout_in_minutes %d, original %d", p.TimeoutMinutes, want)
			}
			if want := orDefault(o.VLLM.StartupTimeoutS, 3600); p.StartupTimeoutS != want {
				t.Errorf("startup_timeout_s %d, original %d", p.StartupTimeoutS, want)
			}
			checkEnv(t, o.VLLM.Env, p.Env)
			checkServe(t, o.VLLM.ServeArgs, p.Serve)
			checkEvals(t, o, p)
		})
	}
}

func sortedStems() []string {
	out := make([]string, 0, len(ported))
	for s := range ported {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func checkGPUs(t *testing.T, o original, p plan.Workload, fixed int, why string) {
	t.Helper()
	nodes := orDefault(o.NumNodes, 1)
	want := orDefault(o.NumGPUs, 1)
	if o.NumGPUs == 0 && o.GPUsPerNode > 0 {
		want = nodes * o.GPUsPerNode
	}
	if p.Nodes != nodes {
		t.Errorf("nodes %d, original num_nodes %d", p.Nodes, nodes)
	}
	if fixed == 0 {
		if p.GPUs != want {
			t.Errorf("reserves %d GPUs (%d×%d), original num_gpus %d", p.GPUs, p.Nodes, p.GPUsPerNode, want)
		}
		return
	}
	if fixed == want {
		t.Errorf("ported table documents a GPU fix (%s) but the original already reserved %d", why, want)
	}
	if p.GPUs != fixed {
		t.Errorf("reserves %d GPUs, documented fix (%s) is %d (original %d)", p.GPUs, why, fixed, want)
	}
	if tpdp := p.Serve.TensorParallelSize * p.Serve.DataParallelSize * p.Serve.PipelineParallelSize; tpdp != fixed {
		t.Errorf("fixed GPU count %d is not TP×DP×PP = %d", fixed, tpdp)
	}
}

// checkEnv: every original variable reaches the server with the same value
// (OMP_NUM_THREADS on ROCm now comes from the profile, which the plan
// merges in).
func checkEnv(t *testing.T, orig map[string]any, got []plan.EnvVar) {
	t.Helper()
	m := map[string]string{}
	for _, e := range got {
		m[e.Name] = e.Value
	}
	for k, v := range orig {
		want := fmt.Sprint(v)
		if g, ok := m[k]; !ok {
			t.Errorf("env %s missing (original %q)", k, want)
		} else if g != want {
			t.Errorf("env %s=%q, original %q", k, g, want)
		}
	}
}

// origFlag is one option of the original serve_args.
type origFlag struct {
	name  string // dashed long name, e.g. speculative-config
	key   string // for --x.key=v: key inside the JSON option
	value string // "" for a bare flag
	tok   string // as written
}

// parseServeArgs word-splits serve_args the way perf-eval did and pairs
// each --flag with its value (the `=` form or the next non-flag token).
func parseServeArgs(s string) []origFlag {
	toks := strings.Fields(s)
	var out []origFlag
	for i := 0; i < len(toks); i++ {
		tok := toks[i]
		if !strings.HasPrefix(tok, "--") {
			continue
		}
		f := origFlag{tok: tok}
		body := strings.TrimPrefix(tok, "--")
		if j := strings.Index(body, "="); j >= 0 {
			body, f.value = body[:j], body[j+1:]
		} else if i+1 < len(toks) && !strings.HasPrefix(toks[i+1], "--") {
			f.value = toks[i+1]
			f.tok += " " + toks[i+1]
			i++
		}
		if j := strings.Index(body, "."); j >= 0 {
			body, f.key = body[:j], body[j+1:]
		}
		f.name = strings.ReplaceAll(body, "_", "-")
		out = append(out, f)
	}
	return out
}

// planFlags indexes the plan's argv: dashed long name -> value tokens (""
// for a bare flag).
func planFlags(args []string) map[string][]string {
	m := map[string][]string{}
	for i := 1; i < len(args); i++ {
		tok := args[i]
		if !strings.HasPrefix(tok, "--") {
			continue
		}
		body, val := strings.TrimPrefix(tok, "--"), ""
		if j := strings.Index(body, "="); j >= 0 {
			body, val = body[:j], body[j+1:]
		} else if i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
			val = args[i+1]
			i++
		}
		name := strings.ReplaceAll(body, "_", "-")
		m[name] = append(m[name], val)
	}
	return m
}

func checkServe(t *testing.T, serveArgs string, s plan.Serve) {
	t.Helper()
	got := planFlags(s.Args)
	flags := parseServeArgs(serveArgs)
	// The port passes nothing the original did not.
	orig := map[string]bool{}
	for _, f := range flags {
		orig[f.name] = true
	}
	for name := range got {
		if !orig[name] {
			t.Errorf("port passes --%s, which the original serve_args do not have", name)
		}
	}
	for _, f := range flags {
		switch f.name {
		case "tensor-parallel-size", "data-parallel-size", "pipeline-parallel-size":
			// Sizes of 1 are vLLM's default and not passed; compare the
			// typed size instead.
			n, err := strconv.Atoi(f.value)
			if err != nil {
				t.Errorf("original %s: %v", f.tok, err)
				continue
			}
			have := map[string]int{
				"tensor-parallel-size":   s.TensorParallelSize,
				"data-parallel-size":     s.DataParallelSize,
				"pipeline-parallel-size": s.PipelineParallelSize,
			}[f.name]
			if have != n {
				t.Errorf("original %s, port has %s %d", f.tok, f.name, have)
			}
			continue
		}
		vals, ok := got[f.name]
		if !ok {
			t.Errorf("original %s: --%s missing from the serve argv %q", f.tok, f.name, s.Args)
			continue
		}
		switch {
		case f.key != "":
			if !jsonHasKey(vals, f.key, f.value) {
				t.Errorf("original %s: --%s %q has no %s=%s", f.tok, f.name, vals, f.key, f.value)
			}
		case strings.HasPrefix(f.value, "{") || strings.HasPrefix(f.value, "["):
			if !anyJSONEqual(vals, f.value) {
				t.Errorf("original %s: port passes --%s %q", f.tok, f.name, vals)
			}
		default:
			if !contains(vals, f.value) {
				t.Errorf("original %s: port passes --%s %q", f.tok, f.name, vals)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func anyJSONEqual(vals []string, want string) bool {
	var w any
	if json.Unmarshal([]byte(want), &w) != nil {
		return false
	}
	for _, v := range vals {
		var g any
		if json.Unmarshal([]byte(v), &g) == nil && reflect.DeepEqual(g, w) {
			return true
		}
	}
	return false
}

// jsonHasKey reports whether one of the JSON values holds key with the
// value vLLM would parse from the dotted form (Python True/False, numbers).
func jsonHasKey(vals []string, key, want string) bool {
	switch want {
	case "True":
		want = "true"
	case "False":
		want = "false"
	}
	for _, v := range vals {
		var m map[string]any
		if json.Unmarshal([]byte(v), &m) != nil {
			continue
		}
		if g, ok := m[key]; ok && fmt.Sprint(g) == want {
			return true
		}
	}
	return false
}

var concSuffix = regexp.MustCompile(`-conc-\d+$`)

func checkEvals(t *testing.T, o original, p plan.Workload) {
	t.Helper()
	// lm_eval: the same tasks (an lm_eval block without tasks was ignored
	// by perf-eval).
	var wantTasks []string
	if o.LMEval != nil {
		for _, task := range o.LMEval.Tasks {
			wantTasks = append(wantTasks, fmt.Sprintf("%s/%d", task.Name, task.NumFewshot))
		}
	}
	var gotTasks []string
	for _, run := range p.LMEval {
		fewshot := "?"
		for i, a := range run.Argv {
			if a == "--num_fewshot" && i+1 < len(run.Argv) {
				fewshot = run.Argv[i+1]
			}
		}
		gotTasks = append(gotTasks, run.Task+"/"+fewshot)
	}
	if !reflect.DeepEqual(gotTasks, wantTasks) {
		t.Errorf("lm_eval tasks %v, original %v", gotTasks, wantTasks)
	}

	// vllm_bench: one run per original config and concurrency, named
	// <config without -conc-N>-conc-<c>, with the same prompts and shape.
	var want []string
	if o.VLLMBench != nil {
		for _, c := range o.VLLMBench.Configs {
			concs, prompts := ints(c.MaxConcurrency), ints(c.NumPrompts)
			for i, conc := range concs {
				np := prompts[0]
				if len(prompts) == len(concs) {
					np = prompts[i]
				}
				want = append(want, fmt.Sprintf("%s-conc-%d np=%d reps=%d %s %d/%d args=%v",
					concSuffix.ReplaceAllString(c.Name, ""), conc, np, orDefault(c.Repetitions, 1),
					c.Backend, c.InputLen, c.OutputLen, plan.BenchArgs(c.Args)))
			}
		}
	}
	var got []string
	for _, run := range p.Bench {
		got = append(got, fmt.Sprintf("%s np=%d reps=%d %s %s/%s args=%v",
			run.Name, run.NumPrompts, run.Repetitions, argAfter(run.Args, "--backend"),
			argAfter(run.Args, "--random-input-len"), argAfter(run.Args, "--random-output-len"),
			extraBenchArgs(run.Args)))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("bench runs\n got  %q\n want %q", got, want)
	}

	// bfcl: the same categories, each with perf-eval's step limit (10
	// when unset) and case cap (one for all, or per category).
	var wantCats, gotCats []string
	if o.BFCL != nil {
		for _, c := range o.BFCL.TestCategories {
			limit := o.BFCL.MaximumStepLimit
			if limit == 0 {
				limit = 10
			}
			n := 0
			switch m := o.BFCL.MaxTestCases.(type) {
			case int:
				n = m
			case map[string]any:
				n, _ = m[c].(int)
			}
			wantCats = append(wantCats, fmt.Sprintf("%s steps=%d cases=%d", c, limit, n))
		}
	}
	for _, r := range p.BFCL {
		gotCats = append(gotCats, fmt.Sprintf("%s steps=%d cases=%d", r.Category, r.MaximumStepLimit, r.MaxTestCases))
	}
	if !reflect.DeepEqual(gotCats, wantCats) {
		t.Errorf("bfcl runs %v, original %v", gotCats, wantCats)
	}
}

func ints(v any) []int {
	switch x := v.(type) {
	case int:
		return []int{x}
	case []any:
		out := make([]int, 0, len(x))
		for _, e := range x {
			if n, ok := e.(int); ok {
				out = append(out, n)
			}
		}
		return out
	}
	return nil
}

func argAfter(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// extraBenchArgs is what follows the options wlc derives from the typed
// config: everything after --max-concurrency N (and --trust-remote-code).
func extraBenchArgs(args []string) []string {
	for i, a := range args {
		if a == "--max-concurrency" && i+1 < len(args) {
			rest := args[i+2:]
			if len(rest) > 0 && rest[0] == "--trust-remote-code" {
				rest = rest[1:]
			}
			if len(rest) == 0 {
				return nil
			}
			return rest
		}
	}
	return nil
}
