package cmdline

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/wlcdev/wlc/internal/testenv"
)

// TestVLLMOptionsFile regenerates vllm_options.txt from the vLLM flag
// catalogs of ../shared/corpus/vllm-flags and fails when the committed file
// differs (WLC_UPDATE=1 rewrites it). The file holds only option strings:
// what abbreviation and alias resolution needs, nothing of the catalogs'
// types or choices.
func TestVLLMOptionsFile(t *testing.T) {
	dir := filepath.Join(testenv.SharedDir(t), "corpus", "vllm-flags")
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	type catalogFlag struct {
		Flag     string   `json:"flag"`
		Aliases  []string `json:"aliases"`
		BoolPair bool     `json:"bool_pair"`
	}
	type release struct {
		label string
		cmds  map[string][]catalogFlag
	}
	var rels []release
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			Meta struct {
				Label string `json:"label"`
			} `json:"meta"`
			Serve []catalogFlag `json:"serve"`
			Bench []catalogFlag `json:"bench_serve"`
		}
		if err := json.Unmarshal(data, &c); err != nil || len(c.Serve) == 0 {
			continue
		}
		rels = append(rels, release{c.Meta.Label, map[string][]catalogFlag{"serve": c.Serve, "bench": c.Bench}})
	}
	if len(rels) == 0 {
		t.Fatalf("%s holds no catalog", dir)
	}
	sort.Slice(rels, func(i, j int) bool { return releaseLess(rels[i].label, rels[j].label) })

	var b strings.Builder
	b.WriteString("# Option strings of `vllm serve` and `vllm bench serve` per vLLM release, one\n")
	b.WriteString("# argparse action a line: command, the releases having it (one digit per\n")
	b.WriteString("# release of the releases line, 1 = present), canonical long name, other\n")
	b.WriteString("# option strings (aliases, --no-x of BooleanOptionalAction).\n")
	b.WriteString("# Generated from ../shared/corpus/vllm-flags by TestVLLMOptionsFile\n")
	b.WriteString("# (WLC_UPDATE=1 go test ./internal/cmdline); do not edit.\n")
	b.WriteString("releases")
	for _, r := range rels {
		b.WriteString(" " + r.label)
	}
	b.WriteString("\n")
	for _, cmd := range []string{"serve", "bench"} {
		present := map[string][]bool{}
		var keys []string
		for i, r := range rels {
			for _, f := range r.cmds[cmd] {
				opts := []string{f.Flag}
				opts = append(opts, f.Aliases...)
				if f.BoolPair {
					opts = append(opts, "--no-"+strings.TrimPrefix(f.Flag, "--"))
				}
				key := strings.Join(opts, " ")
				if present[key] == nil {
					present[key] = make([]bool, len(rels))
					keys = append(keys, key)
				}
				present[key][i] = true
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			bits := ""
			for _, p := range present[k] {
				bits += map[bool]string{true: "1", false: "0"}[p]
			}
			fmt.Fprintf(&b, "%s %s %s\n", cmd, bits, k)
		}
	}
	got := b.String()
	path := "vllm_options.txt"
	if os.Getenv("WLC_UPDATE") != "" {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want, _ := os.ReadFile(path); string(want) != got {
		t.Errorf("%s is stale against %s; regenerate with WLC_UPDATE=1 go test ./internal/cmdline", path, dir)
	}
}

// releaseLess orders releases numerically and main-<date> snapshots last.
func releaseLess(a, b string) bool {
	am, bm := strings.HasPrefix(a, "main"), strings.HasPrefix(b, "main")
	if am != bm {
		return bm
	}
	var x, y [3]int
	fmt.Sscanf(a, "v%d.%d.%d", &x[0], &x[1], &x[2])
	fmt.Sscanf(b, "v%d.%d.%d", &y[0], &y[1], &y[2])
	if x != y {
		for i := range x {
			if x[i] != y[i] {
				return x[i] < y[i]
			}
		}
	}
	return a < b
}

// TestBenchOwnedCUE regenerates schema/bench_owned.cue, the schema's copy
// of VLLMBench's owned options (the exact-name rule lives in CUE, on the
// user's field), and fails when the committed file differs (WLC_UPDATE=1
// rewrites it).
func TestBenchOwnedCUE(t *testing.T) {
	var b strings.Builder
	b.WriteString("// Code generated from cmdline.VLLMBench (internal/cmdline/vllm.go) by\n")
	b.WriteString("// TestBenchOwnedCUE (WLC_UPDATE=1 go test ./internal/cmdline); DO NOT EDIT.\n\n")
	b.WriteString("package schema\n\n")
	b.WriteString("// #BenchOwnedArgs are `vllm bench serve` options wlc sets itself.\n")
	b.WriteString("#BenchOwnedArgs: [")
	for i, f := range VLLMBench.Flags {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", strings.TrimPrefix(f.Name, "--"))
	}
	b.WriteString("]\n\n")
	b.WriteString("// #BenchArgFields names the typed field an owned bench arg comes from; the\n")
	b.WriteString("// other owned args belong to the runner.\n")
	b.WriteString("#BenchArgFields: {\n")
	width := 0
	for _, f := range VLLMBench.Flags {
		width = max(width, len(f.Name))
	}
	for _, f := range VLLMBench.Flags {
		if f.Field != "" {
			key := fmt.Sprintf("%q:", strings.TrimPrefix(f.Name, "--"))
			fmt.Fprintf(&b, "\t%-*s %q\n", width+1, key, f.Field)
		}
	}
	b.WriteString("}\n")
	got := b.String()
	path := filepath.Join(testenv.RepoRoot(t), "schema", "bench_owned.cue")
	if os.Getenv("WLC_UPDATE") != "" {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want, _ := os.ReadFile(path); string(want) != got {
		t.Errorf("%s is stale against cmdline.VLLMBench; regenerate with WLC_UPDATE=1 go test ./internal/cmdline", path)
	}
}
