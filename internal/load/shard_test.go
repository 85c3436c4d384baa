package load_test

import (
	"bytes"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"cuelang.org/go/cue/cuecontext"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/backends/registry"
	"github.com/wlcdev/wlc/internal/load"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/results/ingest"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// allVetters are every backend's vet-time rules, as wlc vet passes them.
func allVetters() []load.Vetter {
	var out []load.Vetter
	for _, b := range registry.All() {
		if v, ok := b.(load.Vetter); ok {
			out = append(out, v)
		}
	}
	return out
}

// loadOutput is everything a user sees of a load: the findings as vet
// prints them, each clean workload's record, and every backend's export
// of the clean workloads.
func loadOutput(t *testing.T, root string, o load.Options) (*load.Result, string) {
	t.Helper()
	o.Vetters = allVetters()
	r := load.Load(cuecontext.New(), filepath.Join(root, "workloads"), root, o)
	var b bytes.Buffer
	r.Diags.WriteText(&b)
	var plans []plan.Workload
	for _, w := range r.Workloads {
		fmt.Fprintf(&b, "workload %s %s:%d:%d %+v\n", w.Name, w.File, w.Line, w.Column, w.Recipe)
		p, err := r.Resolve(w, plan.Overrides{})
		if err != nil {
			fmt.Fprintf(&b, "resolve %s: %v\n", w.Name, err)
			continue
		}
		plans = append(plans, p)
	}
	for _, be := range registry.All() {
		var ps []plan.Workload
		for _, p := range plans {
			if acc, ok := be.(backends.Accepter); ok && acc.Accepts(p) != nil {
				continue
			}
			ps = append(ps, p)
		}
		if len(ps) == 0 {
			continue
		}
		arts, err := be.Lower(ps, backends.Options{Env: map[string]string{}, WorkloadsDir: "workloads/"})
		if err != nil {
			fmt.Fprintf(&b, "backend %s: %v\n", be.Name(), err)
			continue
		}
		for _, a := range arts {
			fmt.Fprintf(&b, "== %s %s %v\n%s\n", be.Name(), a.Path, a.Mode, a.Data)
		}
	}
	return r, b.String()
}

// requireSameLoad loads root as one package and in shards of size
// workload files and requires the same findings, workloads and artifacts,
// byte for byte. wantShards says whether the package must shard.
func requireSameLoad(t *testing.T, root string, o load.Options, size int, wantShards bool) string {
	out, _ := requireSameLoadResult(t, root, o, size, wantShards)
	return out
}

// requireSameLoadResult is requireSameLoad, also returning the sharded
// load's result.
func requireSameLoadResult(t *testing.T, root string, o load.Options, size int, wantShards bool) (string, *load.Result) {
	t.Helper()
	one, want := loadOutput(t, root, load.WithShardFiles(o, -1))
	if one.Shards() != 0 {
		t.Fatalf("the one-package load evaluated %d shards", one.Shards())
	}
	sharded, got := loadOutput(t, root, load.WithShardFiles(o, size))
	switch {
	case wantShards && sharded.Shards() < 2:
		t.Fatalf("want a sharded load, got %d shards", sharded.Shards())
	case !wantShards && sharded.Shards() != 0:
		t.Fatalf("want the package loaded as one (its files refer to each other), got %d shards", sharded.Shards())
	}
	if got != want {
		t.Errorf("the sharded load differs from the one-package load:\n%s", lineDiff(want, got))
	}
	return want, sharded
}

// lineDiff lists the lines only one side has.
func lineDiff(want, got string) string {
	count := map[string]int{}
	for _, l := range strings.Split(want, "\n") {
		count[l]++
	}
	for _, l := range strings.Split(got, "\n") {
		count[l]--
	}
	var out []string
	for l, n := range count {
		if n > 0 {
			out = append(out, "- "+l)
		} else if n < 0 {
			out = append(out, "+ "+l)
		}
	}
	if len(out) == 0 {
		return "(the same lines in another order)"
	}
	return strings.Join(out, "\n")
}

// TestShardedLoadBundled: the bundled workloads (and the recipe-derived
// ones) load the same in shards of one and of three files.
func TestShardedLoadBundled(t *testing.T) {
	repo := testenv.RepoRoot(t)
	for _, size := range []int{1, 3} {
		out, _ := requireSameLoadResult(t, repo, load.Options{}, size, true)
		if strings.Contains(out, "error") && strings.Contains(out, ": error: ") {
			t.Errorf("the bundled workloads have errors:\n%s", out)
		}
	}
	requireSameLoad(t, filepath.Join(repo, "testdata", "recipe-workloads"), load.Options{RecipesDir: recipesDir(t)}, 1, true)
}

// brokenFiles is a package with errors of every kind the loader reports,
// spread over files that land in different shards: schema values and
// rules, an unknown field, missing required fields, a type mismatch, a Go
// value rule (a credential), a duplicate run name across files, a
// workload defined in two conflicting files, an unknown profile, a
// misspelt top-level field, a rule hidden by a refused value beside it
// (see reveal.go), and workloads typed by a shared helper.
var brokenFiles = map[string]string{
	"workloads/helpers.cue": `package workloads

_llama: {
	model:     "meta-llama/Llama-3.1-70B-Instruct"
	precision: "bf16"
	lm_eval: tasks: [{name: "gsm8k"}]
}
`,
	"workloads/a.cue": `package workloads

workloads: a_ok: _llama & {
	profile:       "H200"
	gpus_per_node: 8
	serve: tensor_parallel_size: 8
}
workloads: a_typo: _llama & {
	profile:       "H200"
	gpus_per_node: 8
	serve: tensor_parallel_sise: 8
}
`,
	"workloads/b.cue": `package workloads

workloads: dup: _llama & {
	profile:       "H200"
	gpus_per_node: 8
	serve: tensor_parallel_size: 8
}
`,
	"workloads/c.cue": `package workloads

workloads: dup: gpus_per_node: 4
workloads: c_missing: profile: "H200"
`,
	"workloads/d.cue": `package workloads

workloads: d_runname: _llama & {
	dashboard_name: "a_ok"
	profile:        "H200"
	gpus_per_node:  8
	serve: tensor_parallel_size: 8
	env: HF_TOKEN_VALUE: "hf_abcdefghijklmnopqrstuvwxyzABCDEF"
}
workloads: d_clash: _llama & {
	dashboard_name: "a_ok"
	profile:        "H200"
	gpus_per_node:  8
	serve: tensor_parallel_size: 8
}
workloads: d_profile: _llama & {
	profile:       "H100"
	gpus_per_node: 8
	serve: tensor_parallel_size: 8
}
`,
	"workloads/e.cue": `package workloads

workloads: e_types: _llama & {
	profile:       "B200"
	gpus_per_node: "8"
	precision:     "nvfp4"
	serve: tensor_parallel_size: 4
}
workloads: e_hidden: _llama & {
	profile:       "H200"
	gpus_per_node: 8
	serve: {max_num_seqs: 0, tensor_parallel_size: 3}
}
workloads: e_rule: _llama & {
	profile:       "H200"
	gpus_per_node: 8
	serve: tensor_parallel_size: 4
	vllm_bench: configs: [{name: "x", input_len: 1, output_len: 1, max_concurrency: 1, num_prompts: 1, args: "num-prompts": 5}]
}
`,
	"workloads/f.cue": `package workloads

workload: f_top: {}
`,
}

// TestShardedLoadBroken: a package with broken workloads in several files
// gives the same findings sharded as loaded as one, file per shard (the
// two files of the duplicate workload share one).
func TestShardedLoadBroken(t *testing.T) {
	root := writePkg(t, brokenFiles)
	out, _ := requireSameLoadResult(t, root, load.Options{}, 1, true)
	requireFindings(t, out,
		"workloads/a.cue:11:31: error: workloads.a_typo.serve.tensor_parallel_sise: tensor_parallel_sise is no option of vllm serve in vLLM main-2026-08-17 (there is no --tensor-parallel-sise); did you mean tensor_parallel_size?",
		"workloads/b.cue:5:17: error: workloads.dup.gpus_per_node: conflicting values 4 and 8",
		"workloads/c.cue:3:12: error: workloads.dup: workload dup is defined in 2 places",
		"workloads/c.cue:4:12: error: workloads.c_missing: required field missing: gpus_per_node",
		"workloads/d.cue:8:23: error: workloads.d_runname.env.HF_TOKEN_VALUE",
		"workloads/d.cue:11:18: error: workloads.d_clash.dashboard_name: run name \"a_ok\" is already the run name of workload a_ok (workloads/a.cue)",
		"workloads.d_profile.profile: unknown profile H100",
		"workloads.e_types.gpus_per_node: must be an integer",
		"workloads/e.cue:12:49: error: workloads.e_hidden.serve.tensor_parallel_size: tensor_parallel_size 3 does not divide gpus_per_node 8",
		"workloads/e.cue:18:122: error: workloads.e_rule.vllm_bench.configs[0].args.\"num-prompts\": bench arg num-prompts is set by wlc",
		"workloads/e.cue:16:17: error: workloads.e_rule.gpus_per_node: tensor_parallel_size × data_parallel_size",
		"workloads/f.cue:3:1: error: workload: unknown top-level field workload",
	)
}

// requireFindings requires out (loadOutput's) to hold each of wants.
func requireFindings(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("findings lack %q:\n%s", want, out)
		}
	}
}

// TestShardedLoadFallsBack: files that refer to each other's workloads, or
// declare workloads beside other fields, make the package load as one,
// with the same findings.
func TestShardedLoadFallsBack(t *testing.T) {
	for name, extra := range map[string]map[string]string{
		"reference to workloads": {"workloads/g.cue": `package workloads

workloads: g_copy: workloads.a_ok & {dashboard_name: "g"}
`},
		"workloads beside a helper": {"workloads/h.cue": `package workloads

_h: 1
workloads: h_more: _llama & {profile: "H200", gpus_per_node: 8, serve: tensor_parallel_size: 8}
`},
		"a comprehension over workloads": {"workloads/i.cue": `package workloads

_names: [for k, _ in workloads {k}]
`},
	} {
		t.Run(name, func(t *testing.T) {
			files := map[string]string{}
			for k, v := range brokenFiles {
				files[k] = v
			}
			for k, v := range extra {
				files[k] = v
			}
			requireSameLoad(t, writePkg(t, files), load.Options{}, 1, false)
		})
	}
}

// TestShardedLoadFileKinds: files whose headers hold more than a package
// clause, or that cue/load treats apart (no package clause, a build
// attribute, a syntax error, an @extern), load the same sharded as whole.
func TestShardedLoadFileKinds(t *testing.T) {
	for _, tc := range []struct {
		name      string
		file, src string
		want      string // in the findings and artifacts, or absent if it starts with !
	}{
		{"an import (the file is handed whole)", "workloads/j.cue", `package workloads

import "strings"

workloads: j_import: _llama & {
	description:   strings.ToUpper("j")
	profile:       "H200"
	gpus_per_node: 8
	serve: tensor_parallel_size: 8
}
`, "workload j_import workloads/j.cue:7:17"},
		{"no package clause", "workloads/m.cue", `// A comment.
workloads: m_nopkg: {}
`, "workloads/m.cue:1:1: error: has no package clause"},
		{"a build attribute", "workloads/n.cue", `@if(never)

// Doc.
package workloads

workloads: n_excluded: {}
`, "!n_excluded"},
		{"a syntax error", "workloads/k.cue", `package workloads

workloads: k_broken: {
	profile: "H200"
`, "workloads/k.cue:4:18: error: expected '}', found 'EOF'"},
		{"an @extern file", "workloads/p.cue", `@extern(embed)

package workloads

workloads: p_embed: _llama & {
	profile:       "H200"
	gpus_per_node: 8
	serve: tensor_parallel_size: 8
	description:   _ @embed(file="p.txt", type=text)
}
`, "workload p_embed workloads/p.cue:6:17"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := maps.Clone(brokenFiles)
			files[tc.file] = tc.src
			files["workloads/p.txt"] = "embedded\n"
			root := writePkg(t, files)
			_, want := loadOutput(t, root, load.WithShardFiles(load.Options{}, -1))
			_, got := loadOutput(t, root, load.WithShardFiles(load.Options{}, 1))
			if got != want {
				t.Errorf("the sharded load differs from the one-package load:\n%s", lineDiff(want, got))
			}
			if w, ok := strings.CutPrefix(tc.want, "!"); ok == strings.Contains(want, w) {
				t.Errorf("findings and artifacts, want %q:\n%s", tc.want, want)
			}
		})
	}
}

// TestResolveShapesFromLoad: Resolve describes the row shapes from the
// schema the load built, exactly as from the embedded schema compiled on
// its own (which the load no longer repeats).
func TestResolveShapesFromLoad(t *testing.T) {
	repo := testenv.RepoRoot(t)
	r := load.Load(cuecontext.New(), filepath.Join(repo, "workloads"), repo)
	if len(r.Workloads) == 0 {
		t.Fatalf("no workloads:\n%s", strings.Join(diagLines(r), "\n"))
	}
	p, err := r.Resolve(r.Workloads[0], plan.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := ingest.Shapes()
	if err != nil {
		t.Fatal(err)
	}
	if p.Ingest.Shapes != want || want == "" {
		t.Errorf("shapes from the load:\n%s\nfrom the embedded schema:\n%s", p.Ingest.Shapes, want)
	}
}

// TestBrokenProfileRevealed: a profile with a refused value no longer
// hides the workloads' errors. CUE makes every reference through
// profiles an error once one profile fails, and whether a workload's own
// rules still fire depends on the order CUE evaluates in (a profile
// declared beside a workload is enough to silence them): the reveal
// evaluates the failed workloads again with the profile's refused value
// made unknown, in shards as in the whole package. A shard edits a copy
// of the shared file (every shard compiles the shared files at once):
// go test -race, which CI runs on this package, sees a shard that edits
// the shared tree itself.
func TestBrokenProfileRevealed(t *testing.T) {
	workload := func(name, profile string, gpus int) string {
		return fmt.Sprintf(`workloads: %s: {
	profile:       %q
	nodes:         2
	gpus_per_node: %d
	model:         "org/model"
	precision:     "bf16"
	serve: {tensor_parallel_size: 8, pipeline_parallel_size: 2}
	lm_eval: tasks: [{name: "gsm8k"}]
}
`, name, profile, gpus)
	}
	files := map[string]string{
		"workloads/profiles.cue": strings.Replace(testProfiles, `B70: {hardware: "ARC_PRO_B70", runtime: "docker"`, `B70: {hardware: "ARC_PRO_B70", runtime: "dokcer"`, 1),
		"workloads/more.cue":     "package workloads\n\nprofiles: K8S: {hardware: \"H200\", runtime: \"kubernetes\", queue: \"k\"}\n",
		// A profile beside a workload: the package loads as one.
		"workloads/a.cue": "package workloads\n\nprofiles: SL: {hardware: \"B200\", runtime: \"slurm\", queue: \"s\", slurm: {partition: \"gpu\", max_nodes: 2}}\n\n" + workload("a_nodes", "H200", 8),
	}
	wants := []string{
		"workloads/profiles.cue:8:42: error: profiles.B70.runtime: runtime must be one of docker, k8s, slurm",
		"workloads/more.cue:3:44: error: profiles.K8S.runtime: runtime must be one of docker, k8s, slurm",
		"workloads/a.cue:7:17: error: workloads.a_nodes.nodes: nodes is 2 but profile H200 uses the docker runtime",
	}
	out := requireSameLoad(t, writePkg(t, files), load.Options{}, 1, false)
	requireFindings(t, out, wants...)

	// Workload files alone, in shards; one workload on the broken
	// profile, whose own mistake (3 GPUs for 16) is found too.
	files["workloads/a.cue"] = "package workloads\n\n" + workload("a_nodes", "H200", 8)
	files["workloads/sl.cue"] = "package workloads\n\nprofiles: SL: {hardware: \"B200\", runtime: \"slurm\", queue: \"s\", slurm: {partition: \"gpu\", max_nodes: 2}}\n"
	files["workloads/b.cue"] = "package workloads\n\n" + workload("b_on_broken", "K8S", 3)
	root := writePkg(t, files)
	out = requireSameLoad(t, root, load.Options{}, 1, true)
	wants[2] = "workloads/a.cue:5:17: error: workloads.a_nodes.nodes: nodes is 2 but profile H200 uses the docker runtime"
	requireFindings(t, out, append(wants, "workloads/b.cue:6:17: error: workloads.b_on_broken.gpus_per_node: tensor_parallel_size × data_parallel_size × pipeline_parallel_size = 8 × 1 × 2 = 16")...)
}
