package recipes

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"cuelang.org/go/cue/cuecontext"

	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

func TestCanonicalKey(t *testing.T) {
	for _, tc := range []struct{ flag, key string }{
		{"--max-num-seqs", "--max-num-seqs"},
		{"--max_num_seqs", "--max-num-seqs"},
		{"-tp", "--tensor-parallel-size"},
		{"-dp", "--data-parallel-size"},
		{"-cc.pass_config.fuse_rope_kvcache", "--compilation-config.pass_config.fuse_rope_kvcache"},
		{"--attention_config.use_fp4_indexer_cache", "--attention-config.use_fp4_indexer_cache"},
		{"--no-enable-flashinfer-autotune", "--enable-flashinfer-autotune"},
		{"--no_enable_prefix_caching", "--enable-prefix-caching"},
	} {
		if got, _ := canonical(tc.flag); got != tc.key {
			t.Errorf("canonical(%q) = %q, want %q", tc.flag, got, tc.key)
		}
	}
}

func TestDedupeNormalization(t *testing.T) {
	for _, tc := range []struct {
		name      string
		in        []string
		want      []string // tokens as written, after dedupe
		conflicts []string // keys reported
	}{
		{"last wins in its own position", []string{"--a", "1", "--b", "--a", "2"}, []string{"--b", "--a", "2"}, []string{"--a"}},
		{"underscore and dash are one flag", []string{"--max_num_seqs", "16", "--max-num-seqs", "512"}, []string{"--max-num-seqs", "512"}, []string{"--max-num-seqs"}},
		{"= form and space form are one flag", []string{"--block-size=64", "--block-size", "256"}, []string{"--block-size", "256"}, []string{"--block-size"}},
		{"short alias", []string{"-tp", "2", "--tensor-parallel-size", "8"}, []string{"--tensor-parallel-size", "8"}, []string{"--tensor-parallel-size"}},
		{"same value is no conflict", []string{"--kv-cache-dtype", "fp8", "--kv_cache_dtype=fp8"}, []string{"--kv_cache_dtype=fp8"}, nil},
		{"JSON compared by content", []string{"--cc", `{"a":1, "b":2}`, "--cc", `{"b":2,"a":1}`}, []string{"--cc", `{"b":2,"a":1}`}, nil},
		{"negation conflicts", []string{"--enable-flashinfer-autotune", "--no-enable-flashinfer-autotune"}, []string{"--no-enable-flashinfer-autotune"}, []string{"--enable-flashinfer-autotune"}},
		{"negative number is a value", []string{"--x", "-1"}, []string{"--x", "-1"}, nil},
		{"dotted sub-keys are distinct", []string{"--compilation-config", "{}", "--compilation-config.mode", "3"}, []string{"--compilation-config", "{}", "--compilation-config.mode", "3"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, conflicts := dedupe(Group(tc.in, nil, "test"))
			var got []string
			for _, a := range out {
				got = append(got, a.Tokens()...)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			var keys []string
			for _, c := range conflicts {
				keys = append(keys, c.Key)
			}
			if !reflect.DeepEqual(keys, tc.conflicts) {
				t.Errorf("conflicts %q, want %q", keys, tc.conflicts)
			}
		})
	}
}

// TestComposeOrder checks the layer order of §3.1 on a synthetic recipe in
// which every layer sets the same flag --x to its own name and adds one
// flag of its own: the last layer wins, and every layer's own flag appears
// in layer order.
func TestComposeOrder(t *testing.T) {
	dir := t.TempDir()
	testenv.CopyFile(t, filepath.Join(corpus(t), "taxonomy.yaml"), filepath.Join(dir, "taxonomy.yaml"))
	os.MkdirAll(filepath.Join(dir, "strategies"), 0o755)
	os.MkdirAll(filepath.Join(dir, "models", "org"), 0o755)
	os.WriteFile(filepath.Join(dir, "strategies", "single_node_tep.yaml"), []byte(`name: single_node_tep
deploy_type: single_node
display_name: "TEP"
orientation: balanced
description: "d"
hardware_match: {min_gpus: 2, max_gpus: 8, multi_node: false, architecture: moe}
vllm_args: ["--x", "strategy", "--strategy"]
parallel_flag: "--tensor-parallel-size"
`), 0o644)
	os.WriteFile(filepath.Join(dir, "models", "org", "m.yaml"), []byte(`meta: {title: t, slug: s, provider: p, description: d, date_added: 2026-01-01, date_updated: 2026-01-02, difficulty: beginner, tasks: [text]}
model:
  model_id: org/m
  min_vllm_version: "0.20.0"
  architecture: moe
  parameter_count: 1B
  base_args: ["--x", "base", "--base", "--tensor-parallel-size", "1"]
  base_env: {E: base, BASE: "1"}
features:
  on: {description: d, args: ["--x", "feature", "--feature"]}
  off: {description: d, args: ["--off"]}
  moded:
    description: d
    default_mode: a
    modes:
      a: {args: ["--mode", "a"], variants: [other]}
      b: {args: ["--mode", "b"], hardware_overrides: {blackwell: {args: ["--mode", "b-blackwell"]}}}
opt_in_features: [off]
variants:
  default:
    precision: bf16
    vram_minimum_gb: 10
    extra_args: ["--x", "variant", "--variant"]
    extra_env: {E: variant}
    hardware_overrides:
      b200: {extra_args: ["--x", "variant-exact", "--variant-exact"]}
      blackwell: {extra_args: ["--x", "variant-gen", "--variant-gen"], extra_env: {E: variant-gen}}
compatible_strategies: [single_node_tep]
hardware_overrides:
  blackwell: {extra_args: ["--x", "recipe-gen", "--recipe-gen"]}
  nvidia: {extra_args: ["--nvidia-never"]}
strategy_overrides:
  single_node_tep:
    extra_args: ["--x", "so-extra", "--so-extra"]
    vllm_args: ["--x", "so-vllm", "--so-vllm"]
    env: {E: so}
    hardware_overrides:
      b200: {extra_args: ["--x", "so-exact", "--so-exact"]}
guide: g
`), 0o644)
	s, err := Load(cuecontext.New(), dir, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Diags) > 0 {
		t.Fatalf("schema: %v", s.Diags)
	}
	c := Compose(s, Request{Recipe: "org/m", Hardware: "b200"})
	if c.Findings.Diags().HasErrors() {
		t.Fatal(c.Findings.Diags())
	}
	got := strings.Join(c.Argv(0, false), " ")
	want := "org/m --base --variant --variant-exact --strategy --tensor-parallel-size 8 --so-extra --so-vllm " +
		"--recipe-gen --variant-gen --so-exact --x feature --feature --mode b-blackwell"
	if got != want {
		t.Errorf("argv:\n got %s\nwant %s", got, want)
	}
	// Every overridden --x value and the shadowed TP are reported.
	var msgs []string
	for _, f := range c.Findings {
		msgs = append(msgs, f.Message)
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{"--x is set more than once", "--tensor-parallel-size 1 from model.base_args", "is replaced by \"variant-gen\""} {
		if !strings.Contains(all, want) {
			t.Errorf("findings lack %q:\n%s", want, all)
		}
	}
	if env := fmt.Sprint(c.EnvMap()); env != "map[BASE:1 E:variant-gen]" {
		t.Errorf("env %s", env)
	}
}

// BenchmarkVet200 loads and vets 200 recipe files: the corpus's models
// replicated under distinct org directories.
func BenchmarkVet200(b *testing.B) {
	src := corpus(b)
	dir := b.TempDir()
	testenv.CopyFile(b, filepath.Join(src, "taxonomy.yaml"), filepath.Join(dir, "taxonomy.yaml"))
	strategies, _ := filepath.Glob(filepath.Join(src, "strategies", "*.yaml"))
	for _, f := range strategies {
		testenv.CopyFile(b, f, filepath.Join(dir, "strategies", filepath.Base(f)))
	}
	models, _ := filepath.Glob(filepath.Join(src, "models", "*", "*.yaml"))
	n := 0
	for i := 0; n < 200; i++ {
		for _, f := range models {
			if n == 200 {
				break
			}
			org := fmt.Sprintf("%s-%d", filepath.Base(filepath.Dir(f)), i)
			testenv.CopyFile(b, f, filepath.Join(dir, "models", org, filepath.Base(f)))
			n++
		}
	}
	ctx := cuecontext.New()
	sch, err := CompileSchema(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := LoadWith(ctx, sch, dir, dir)
		if err != nil {
			b.Fatal(err)
		}
		if len(s.Recipes) != 200 {
			b.Fatalf("%d recipes", len(s.Recipes))
		}
		Vet(s)
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/200, "ms/file")
}
