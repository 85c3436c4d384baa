package load_test

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/wlcdev/wlc/internal/engine/cmdline"
)

// spellings are every alias and unambiguous prefix argparse (allow_abbrev)
// reads as one of spec's declared flags, computed here from the release
// option lists alone: a prefix of an option string of the flag's action
// that, in some release, starts no other action's option string and is no
// option string of any release.
func spellings(spec *cmdline.Spec) map[string]*cmdline.Flag {
	exact := map[string]bool{}
	for _, r := range spec.Releases {
		for _, act := range r.Actions {
			for _, o := range act {
				exact[o] = true
			}
		}
	}
	out := map[string]*cmdline.Flag{}
	for _, r := range spec.Releases {
		for _, act := range r.Actions {
			f := spec.Lookup(act[0])
			if f == nil {
				continue
			}
			for _, o := range act {
				out[o] = f
				for n := 2; n < len(o); n++ {
					p := o[:n]
					if exact[p] || p == "--" || (strings.HasPrefix(o, "--") && n < 3) {
						continue
					}
					unique := true
					for _, other := range r.Actions {
						if other[0] == act[0] {
							continue
						}
						for _, oo := range other {
							if strings.HasPrefix(oo, p) {
								unique = false
							}
						}
					}
					if p == "--h" || p == "--he" || p == "--hel" || p == "-" {
						unique = false // argparse's own --help
					}
					if unique {
						out[p] = f
					}
				}
			}
		}
	}
	return out
}

// TestTypedFlagSpellingsRefused: every alias and unambiguous prefix of a
// flag wlc sets (a typed serve field, or the runner) in serve.extra_args,
// and of an owned option in a bench config's args, is a vet error naming
// the field to use.
func TestTypedFlagSpellingsRefused(t *testing.T) {
	serve := spellings(cmdline.VLLMServe)
	var toks []string
	for s := range serve {
		toks = append(toks, s)
	}
	sort.Strings(toks)
	for _, must := range []string{"-tp", "-cc", "--tensor-parallel", "--no-enable-prefix", "--compilation-con"} {
		if serve[must] == nil {
			t.Fatalf("%s is not among the spellings: the release lists changed?", must)
		}
	}
	var extra []string
	for _, s := range toks {
		extra = append(extra, strconv.Quote(s), `"1"`)
	}
	// Options wlc leaves alone: exact untyped names (--tokenizer is a
	// prefix of --tokenizer-mode), their aliases and prefixes, and
	// prefixes vLLM finds ambiguous.
	free := []string{"--tokenizer", "--enforce", "-q", "--max-num", "--enable", "--quantization=fp8"}
	for _, s := range free {
		extra = append(extra, strconv.Quote(s))
	}
	bench := spellings(cmdline.VLLMBench)
	var keys []string
	for s := range bench {
		keys = append(keys, strings.TrimPrefix(s, "--"))
	}
	keys = append(keys, "max-concurrency=64", "model=x", "num_prom")
	sort.Strings(keys)
	var args []string
	for _, k := range keys {
		args = append(args, fmt.Sprintf("%q: 1", k))
	}
	r := loadPkg(t, writePkg(t, map[string]string{"workloads/w.cue": workload(`	profile:       "H200"
	gpus_per_node: 8
	model:         "org/model"
	precision:     "bf16"
	serve: {tensor_parallel_size: 8, compilation_config: mode: 3, extra_args: [` + strings.Join(extra, ", ") + `]}
	vllm_bench: configs: [{name: "c", input_len: 8, output_len: 8, max_concurrency: 4, num_prompts: 8, args: {` + strings.Join(args, ", ") + `}}]
`)}))
	got := map[string]string{}
	for _, d := range r.Diags {
		got[d.Path] = d.Message
	}
	for i, s := range free {
		if msg, refused := got[fmt.Sprintf("workloads.w.serve.extra_args[%d]", 2*len(toks)+i)]; refused {
			t.Errorf("extra_args %s refused: %s", s, msg)
		}
	}
	for i, s := range toks {
		f := serve[s]
		msg := got[fmt.Sprintf("workloads.w.serve.extra_args[%d]", 2*i)]
		if !strings.Contains(msg, "is set by "+f.SetBy()+"; remove it from extra_args") {
			t.Errorf("extra_args %s (%s): got %q, want it refused naming %s", s, f.Name, msg, f.SetBy())
		}
	}
	for _, k := range keys {
		f := bench["--"+k]
		if f == nil {
			m, _ := cmdline.VLLMBench.Resolve("--" + strings.ReplaceAll(k, "_", "-"))
			f = m.Flag
		}
		label := strconv.Quote(k)
		if regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`).MatchString(k) {
			label = k
		}
		msg := got["workloads.w.vllm_bench.configs[0].args."+label]
		if !regexp.MustCompile(`^bench arg .* is set by (wlc from )?` + regexp.QuoteMeta(f.SetBy())).MatchString(msg) {
			t.Errorf("bench args key %s (%s): got %q, want it refused naming %s", k, f.Name, msg, f.SetBy())
		}
	}
	if t.Failed() {
		return
	}
	t.Logf("%d serve spellings and %d bench keys refused", len(toks), len(keys))
}
