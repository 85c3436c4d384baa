package importer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// TestImportValuesInert replaces every scalar of real perf-eval workloads
// (and every comment) with values that would end a `//` comment or a CUE
// string and declare a second workload. Each import must refuse the file
// or produce CUE that declares exactly the one workload: nothing from the
// YAML may become CUE.
func TestImportValuesInert(t *testing.T) {
	dir := filepath.Join(testenv.SharedDir(t), "corpus", "perf-eval", "workloads")
	payloads := []string{
		"x\n}\nworkloads: injected: {}\n//",
		"x\rworkloads: injected: {}",
		"x\u2028workloads: injected: {}",
		"x\" }\nworkloads: injected: {}\n\"",
		"x\\\nworkloads: injected: {}",
	}
	files := []string{"kimi_k2_5_gb300_pd.yaml", "attn_sweep_amd_gpt_oss_120b_mi355x.yaml"}
	cases := 0
	for _, name := range files {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		var scalars []*yaml.Node
		var walk func(n *yaml.Node)
		walk = func(n *yaml.Node) {
			if n.Kind == yaml.ScalarNode {
				scalars = append(scalars, n)
			}
			for _, c := range n.Content {
				walk(c)
			}
		}
		walk(&doc)
		for i := range scalars {
			for _, p := range payloads {
				n := scalars[i]
				saved, savedStyle, savedTag, savedHead := n.Value, n.Style, n.Tag, n.HeadComment
				n.Value, n.Style, n.Tag, n.HeadComment = p, yaml.DoubleQuotedStyle, "!!str", "# "+p
				out, err := yaml.Marshal(&doc)
				n.Value, n.Style, n.Tag, n.HeadComment = saved, savedStyle, savedTag, savedHead
				if err != nil {
					continue // not representable in YAML
				}
				cases++
				res := PerfEval(name, out)
				for _, d := range res.Findings {
					if strings.Contains(d.Message, "internal error") {
						t.Errorf("%s, scalar %d (%q) = %q: %s", name, i, saved, p, d)
					}
				}
				if res.Source == nil {
					continue // refused
				}
				if err := checkShape(res.Source, res.Key); err != nil {
					t.Errorf("%s, scalar %d (%q) = %q: the CUE %v:\n%s", name, i, saved, p, err, res.Source)
				}
				for _, l := range strings.Split(string(res.Source), "\n") {
					if strings.HasPrefix(strings.TrimSpace(l), "workloads: injected") {
						t.Errorf("%s, scalar %d (%q) = %q: injected line %q", name, i, saved, p, l)
					}
				}
			}
		}
	}
	t.Logf("%d imports with a payload", cases)
	// A file name is a value too (the header names it).
	res := PerfEval("evil\nworkloads: injected: {}\n.yaml", []byte("name: x\ngpu: H200\nnum_gpus: 1\nvllm:\n  model: Qwen/Qwen3-8B\nlm_eval:\n  tasks:\n    - name: gsm8k\n"))
	if res.Source != nil {
		if err := checkShape(res.Source, res.Key); err != nil {
			t.Errorf("file name: %v\n%s", err, res.Source)
		}
	}
}

func TestCheckShape(t *testing.T) {
	ok := "package workloads\n\n// c\nlet x = 1\nworkloads: a: {\n\tprofile: \"p\"\n}\n"
	if err := checkShape([]byte(ok), "a"); err != nil {
		t.Errorf("%v", err)
	}
	for _, bad := range []string{
		"package workloads\nworkloads: a: {}\nworkloads: b: {}\n",
		"package workloads\nworkloads: a: {}\nprofiles: x: {}\n",
		"package workloads\nworkloads: {a: {}, b: {}}\n",
		"package workloads\nworkloads: b: {}\n",
	} {
		if err := checkShape([]byte(bad), "a"); err == nil {
			t.Errorf("accepted:\n%s", bad)
		}
	}
}
