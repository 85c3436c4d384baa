package plandiff

import (
	"bytes"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/schema"
)

func sample(name string) plan.Workload {
	return plan.Workload{
		Name: name, RunName: name, File: "workloads/" + name + ".cue", ResultsPath: "results/" + name,
		Profile:  schema.Profile{Name: "H200", Hardware: "H200", Runtime: "docker", Queue: "h200"},
		Hardware: schema.Hardware{Name: "H200", GPUsPerNode: 8},
		Platform: "cuda", Nodes: 1, GPUsPerNode: 8, GPUs: 8, Engine: "vllm",
		Model: "Qwen/Qwen3-32B", Precision: "bf16", TimeoutMinutes: 120,
		Image: plan.Image{Ref: "vllm/vllm-openai:v0.11.0", Pull: "vllm/vllm-openai:v0.11.0", Source: "workload image"},
		Env:   []plan.EnvVar{{Name: "HF_HOME", Value: "/data/hf"}, {Name: "VLLM_X", Value: "1"}},
		Serve: plan.Serve{Command: []string{"vllm", "serve"},
			Args:               []string{"Qwen/Qwen3-32B", "--tensor-parallel-size", "8", "--max-num-seqs", "256", "--max-model-len", "32000"},
			TensorParallelSize: 8, DataParallelSize: 1, PipelineParallelSize: 1},
		Bench: []plan.BenchRun{
			{Name: "1k-conc-8", Args: []string{"--max-concurrency", "8", "--num-prompts", "64"}, MaxConcurrency: 8, NumPrompts: 64, Repetitions: 1},
			{Name: "1k-conc-16", Args: []string{"--max-concurrency", "16", "--num-prompts", "64"}, MaxConcurrency: 16, NumPrompts: 64, Repetitions: 1},
		},
	}
}

func jobs(t *testing.T, ps ...plan.Workload) []Job {
	t.Helper()
	js, err := NewJobs(ps)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// Options are compared as the engine reads them: an option's spelling
// (--max-num-seqs=512, -tp's long form, 32k) does not matter, its value
// does; a switch is an option like any other.
func TestServeOptionsCompareAsOptions(t *testing.T) {
	o, n := sample("a"), sample("a")
	n.Serve.Args = []string{"Qwen/Qwen3-32B", "--max-model-len", "32000", "--max-num-seqs=512", "--tensor-parallel-size", "8", "--enable-prefix-caching"}
	got := Changes(o, n)
	want := []Change{
		{Area: "serve", Item: "--max-num-seqs", Kind: "changed", Old: "256", New: "512"},
		{Area: "serve", Item: "--enable-prefix-caching", Kind: "added", New: "true"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Changes (-want +got):\n%s", d)
	}
}

// The same options spelled otherwise still differ as text, and the hash
// differs: the diff says why instead of saying nothing.
func TestSameOptionsOtherSpelling(t *testing.T) {
	o, n := sample("a"), sample("a")
	n.Serve.Args = []string{"Qwen/Qwen3-32B", "--tensor-parallel-size", "8", "--max-num-seqs", "256", "--max-model-len", "32k"}
	got := Changes(o, n)
	if len(got) != 1 || got[0].Item != "argv" || got[0].Why == "" {
		t.Errorf("Changes = %+v, want one argv change saying the options are the same", got)
	}
}

func TestEnvBenchTopologyImage(t *testing.T) {
	o, n := sample("a"), sample("a")
	n.Env = []plan.EnvVar{{Name: "HF_HOME", Value: "/other"}, {Name: "NCCL_DEBUG", Value: "INFO"}}
	n.Bench = []plan.BenchRun{o.Bench[1], {Name: "1k-conc-32", Args: []string{"--max-concurrency", "32", "--num-prompts", "128"}, MaxConcurrency: 32, NumPrompts: 128, Repetitions: 1}}
	n.Bench[0].Args = []string{"--max-concurrency", "16", "--num-prompts", "128"}
	n.GPUsPerNode, n.GPUs = 4, 4
	n.Image = plan.Image{Ref: "vllm/vllm-openai:v0.12.0", Pull: "vllm/vllm-openai:v0.12.0", Source: "VLLM_IMAGE"}
	got := Changes(o, n)
	want := []Change{
		{Area: "image", Item: "ref", Kind: "changed", Old: "vllm/vllm-openai:v0.11.0", New: "vllm/vllm-openai:v0.12.0", Why: "chosen by VLLM_IMAGE (was workload image)"},
		{Area: "env", Item: "HF_HOME", Kind: "changed", Old: "/data/hf", New: "/other"},
		{Area: "env", Item: "NCCL_DEBUG", Kind: "added", New: "INFO"},
		{Area: "env", Item: "VLLM_X", Kind: "removed", Old: "1"},
		{Area: "topology", Item: "gpus_per_node", Kind: "changed", Old: "8", New: "4"},
		{Area: "topology", Item: "gpus", Kind: "changed", Old: "8", New: "4"},
		{Area: "bench", Item: "1k-conc-16: --num-prompts", Kind: "changed", Old: "64", New: "128"},
		{Area: "bench", Item: "1k-conc-32", Kind: "added", New: "0 in / 0 out, concurrency 32, 128 prompts, 1 repetition(s)"},
		{Area: "bench", Item: "1k-conc-8", Kind: "removed", Old: "0 in / 0 out, concurrency 8, 64 prompts, 1 repetition(s)"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Changes (-want +got):\n%s", d)
	}
}

// A field no area reads is still explained, leaf by leaf.
func TestEveryHashChangeIsExplained(t *testing.T) {
	o, n := sample("a"), sample("a")
	n.Profile.Queue = "h200-canary"
	n.StartupTimeoutS = 900
	got := Changes(o, n)
	want := []Change{
		{Area: "profile", Item: "profile.queue", Kind: "changed", Old: "h200", New: "h200-canary"},
		{Area: "startup_timeout_s", Item: "startup_timeout_s", Kind: "changed", Old: "0", New: "900"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Changes (-want +got):\n%s", d)
	}
}

// Matching: by name, then a vanished job's hash under a new name is a
// rename; of two vanished jobs with one hash, one is renamed and the
// other removed.
func TestCompareStatuses(t *testing.T) {
	keep, chg, twin1, twin2 := sample("keep"), sample("chg"), sample("twin1"), sample("twin2")
	chg2 := sample("chg")
	chg2.Serve.Args = append(chg2.Serve.Args, "--enforce-eager")
	added := sample("added")
	added.Model = "other/model"
	renamed := sample("twin_new")
	r := Compare("old", "new", jobs(t, keep, chg, twin1, twin2), jobs(t, keep, chg2, added, renamed))
	got := map[string]string{}
	for _, e := range r.Entries {
		got[e.Name] = string(e.Status) + " " + e.OldName
	}
	want := map[string]string{
		"keep": "unchanged ", "chg": "changed ", "added": "added ",
		"twin_new": "renamed twin1", "twin2": "removed ",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("statuses (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"added", "chg"}, r.Touched()); d != "" {
		t.Errorf("Touched (-want +got):\n%s", d)
	}
	if s := r.Summary(); s != "1 changed, 1 added, 1 removed, 1 renamed, 1 unchanged" {
		t.Errorf("Summary = %q", s)
	}
}

func TestPriceMeasuredAndEstimated(t *testing.T) {
	a, b := sample("a"), sample("b")
	b.Model = "other"
	js := jobs(t, a, b)
	runs := map[string]Run{js[0].Hash: {Hash: js[0].Hash, WallS: 1800, File: "r/a/provenance.json"}}
	r := Compare("old", "new", js, js)
	r.Price(runs, func(p plan.Workload) (int, string) { return p.TimeoutMinutes * 60, "timeout_in_minutes" })
	want := Total{Old: 20, New: 20, Delta: 0, OldBasis: "1 measured, 1 estimated", NewBasis: "1 measured, 1 estimated", DeltaBasis: "2 measured, 2 estimated"}
	share := want // both jobs run on sample's one profile
	want.ByProfile = []ProfileTotal{{Profile: a.Profile.Name, Total: share}}
	if d := cmp.Diff(want, *r.GPUHours); d != "" {
		t.Errorf("GPUHours (-want +got):\n%s", d)
	}
	if f := r.Entries[0].Cost.New; f.Basis != Measured || f.GPUHours != 4 {
		t.Errorf("a: %+v, want 8 GPUs × 0.5 h measured", f)
	}
	if f := r.Entries[1].Cost.New; f.Basis != Estimated || f.GPUHours != 16 {
		t.Errorf("b: %+v, want 8 GPUs × 2 h estimated", f)
	}
}

func TestReadRuns(t *testing.T) {
	fsys := fstest.MapFS{
		"x/1/provenance.json": {Data: []byte(`{"job_hash": "v1-aaaaaaaaaaaa", "wall_seconds": 100, "finished_at": "2026-12-02T00:00:00Z"}`)},
		"x/2/provenance.json": {Data: []byte(`{"job_hash": "v1-aaaaaaaaaaaa", "wall_seconds": 200, "finished_at": "2026-12-01T00:00:00Z"}`)},
		"y/provenance.json":   {Data: []byte(`{"job_hash": "v1-bbbbbbbbbbbb", "wall_seconds": 300.5, "phases": {"bench_s": 3}}`)},
		"z/provenance.json":   {Data: []byte("{\n  \"job_hash\": \"v1-c\",\n  \"wall_seconds\": 0\n}")},
		"w/provenance.json":   {Data: []byte("{\n  \"job_hash\": \"v1-c\",\n  oops\n}")},
		"other.json":          {Data: []byte(`not json, not read`)},
	}
	runs, errs := ReadRuns(fsys, "res")
	if got := runs["v1-aaaaaaaaaaaa"]; got.WallS != 100 || got.File != "res/x/1/provenance.json" {
		t.Errorf("the latest run of a hash: %+v, want x/1's 100 s", got)
	}
	if got := runs["v1-bbbbbbbbbbbb"]; got.WallS != 300.5 {
		t.Errorf("a run without finished_at: %+v", got)
	}
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, e.Error())
	}
	want := []string{
		`res/w/provenance.json:3:3: not a provenance record: invalid character 'o' looking for beginning of object key string; it must be a JSON object with job_hash (a string) and wall_seconds (a number of seconds)`,
		`res/z/provenance.json:1:1: wall_seconds is missing or not a positive number of seconds`,
	}
	if d := cmp.Diff(want, msgs); d != "" {
		t.Errorf("errors (-want +got):\n%s", d)
	}
}

// Markdown values cannot break the table or the code span they sit in.
func TestMarkdownCodeSpans(t *testing.T) {
	for in, want := range map[string]string{
		"plain":      "`plain`",
		"a|b":        "`a\\|b`",
		"x`y":        "``x`y``",
		"`edge":      "`` `edge ``",
		"two\nlines": "`two lines`",
		"":           `""`,
	} {
		if got := code(in); got != want {
			t.Errorf("code(%q) = %q, want %q", in, got, want)
		}
	}
	o, n := sample("a"), sample("a")
	n.Env = append(n.Env, plan.EnvVar{Name: "WEIRD", Value: "a|b`c\nd"})
	r := Compare("old", "new", jobs(t, o), jobs(t, n))
	var b bytes.Buffer
	if err := r.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(l, "| env ") && strings.Count(strings.ReplaceAll(l, `\|`, ""), "|") != 4 {
			t.Errorf("a table row with a value's pipe breaks the table: %q", l)
		}
	}
}

// A job moved to another fleet with the same GPUs and budget leaves the
// selection's total as it was; its profiles' shares say where the
// GPU-hours went, and only those two moved.
func TestPriceByProfile(t *testing.T) {
	stay, move := sample("stay"), sample("move")
	moved := move
	moved.Profile.Name, moved.Profile.Queue = "H200_B", "h200-b"
	moved.Model = "other" // a change of its own besides the move
	r := Compare("old", "new", jobs(t, stay, move), jobs(t, stay, moved))
	r.Price(nil, func(p plan.Workload) (int, string) { return p.TimeoutMinutes * 60, "timeout_in_minutes" })
	if got := r.GPUHours; got.Old != 32 || got.New != 32 || got.Delta != 0 {
		t.Fatalf("total %+v, want 32 → 32", got)
	}
	est := Estimated
	want := []ProfileTotal{
		{Profile: "H200", Total: Total{Old: 32, New: 16, Delta: -16, OldBasis: est, NewBasis: est, DeltaBasis: est}},
		{Profile: "H200_B", Total: Total{Old: 0, New: 16, Delta: 16, OldBasis: "none", NewBasis: est, DeltaBasis: est}},
	}
	if d := cmp.Diff(want, r.GPUHours.Moved()); d != "" {
		t.Errorf("Moved (-want +got):\n%s", d)
	}
	if len(r.GPUHours.ByProfile) != 2 {
		t.Errorf("ByProfile has %d profiles, want the 2 either side runs jobs on", len(r.GPUHours.ByProfile))
	}
}
