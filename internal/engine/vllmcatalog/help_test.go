package vllmcatalog

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestParseHelpSamples reads argparse help of `vllm serve` and `vllm bench
// serve` (testdata/help, printed by argparse for the actions of vLLM
// v0.13.0 and main-2026-08-17; see gen.py there) and checks that every
// action comes back as the built-in catalog has it: option strings, whether
// it takes a value, nargs, choices.
func TestParseHelpSamples(t *testing.T) {
	builtin := map[string]*Catalog{}
	for _, c := range Builtin() {
		builtin[c.Label] = c
	}
	for _, label := range []string{"v0.13.0", "main-2026-08-17"} {
		for _, cmd := range []string{"serve", "bench"} {
			t.Run(cmd+"-"+label, func(t *testing.T) {
				data, err := os.ReadFile(filepath.Join("testdata", "help", cmd+"-"+label+".txt"))
				if err != nil {
					t.Fatal(err)
				}
				got, err := ParseHelp(string(data))
				if err != nil {
					t.Fatal(err)
				}
				want := builtin[label].flags(cmd)
				if len(got) != len(want) {
					t.Errorf("%d actions, want %d", len(got), len(want))
				}
				byName := map[string]*Flag{}
				for _, f := range got {
					byName[f.Name()] = f
				}
				for _, w := range want {
					g := byName[w.Name()]
					if g == nil {
						t.Errorf("%s: missing", w.Name())
						continue
					}
					if a, b := sorted(g.Options), sorted(w.Options); !slices.Equal(a, b) {
						t.Errorf("%s: options %v, want %v", w.Name(), a, b)
					}
					if a, b := kindClass(g.Kind), kindClass(w.Kind); a != b {
						t.Errorf("%s: kind %s, want %s", w.Name(), g.Kind, w.Kind)
					}
					if g.Nargs != w.Nargs {
						t.Errorf("%s: nargs %q, want %q", w.Name(), g.Nargs, w.Nargs)
					}
					if a, b := sorted(g.Choices), sorted(w.Choices); !slices.Equal(a, b) {
						t.Errorf("%s: choices %v, want %v", w.Name(), a, b)
					}
				}
			})
		}
	}
}

// kindClass is what help text can tell of a kind: a JSON config option
// says "JSON" in its help, JSON-only or not.
func kindClass(k Kind) Kind {
	if k == JSON {
		return JSONOrStr
	}
	return k
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}

func TestParseHelpLines(t *testing.T) {
	// Python 3.13 prints a metavar once ("-tp, --tensor-parallel-size N");
	// older versions after each option string.
	help := `usage: vllm serve [model_tag] [options]

options:
  -h, --help            show this help message and exit
  -tp, --tensor-parallel-size TENSOR_PARALLEL_SIZE
                        Number of tensor parallel groups.
  --max-num-seqs MAX_NUM_SEQS, -mns MAX_NUM_SEQS
  --enable-prefix-caching, --no-enable-prefix-caching
                        - a bullet in help text
                        --not-an-option either
  --served-model-name SERVED_MODEL_NAME [SERVED_MODEL_NAME ...]
  --kv-cache-dtype {auto,fp8}  Data type for kv cache storage.
  --compilation-config COMPILATION_CONFIG, -cc COMPILATION_CONFIG
                        Should either be a valid JSON string or JSON keys
                        passed individually.
  --headless            Run in headless mode.
  --lora-modules [LORA_MODULES ...]
`
	fs, err := ParseHelp(help)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fs {
		got = append(got, strings.Join(f.Options, " ")+" "+string(f.Kind)+" "+f.Nargs+" "+strings.Join(f.Choices, ","))
	}
	want := []string{
		"--tensor-parallel-size -tp value  ",
		"--max-num-seqs -mns value  ",
		"--enable-prefix-caching --no-enable-prefix-caching bool  ",
		"--served-model-name value + ",
		"--kv-cache-dtype value  auto,fp8",
		"--compilation-config -cc json_or_str  ",
		"--headless flag  ",
		"--lora-modules value * ",
	}
	if !slices.Equal(got, want) {
		t.Errorf("ParseHelp =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := ParseHelp("Traceback (most recent call last):\n"); err == nil || !strings.Contains(err.Error(), "no options found") {
		t.Errorf("ParseHelp(not help) = %v, want a 'no options found' error", err)
	}
}

// TestParseHelpNotUTF8: a help file that is not UTF-8 is refused, naming
// the line (FuzzParseHelp found a choice with such a byte, which the
// compact catalog form wrote back as U+FFFD).
func TestParseHelpNotUTF8(t *testing.T) {
	_, err := ParseHelp("options:\n  --x X  ok \uFFFD is a real character\n  --mamba-cache-mode {align,\xa0\xa0all,none}\n")
	if err == nil || err.Error() != "not UTF-8 text: line 3 holds a byte that is not; save the help output as the image prints it" {
		t.Errorf("error %v", err)
	}
}
