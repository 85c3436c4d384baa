package vllmcatalog

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// FuzzParseHelp reads arbitrary text as a team's help file, the input of
// a flag catalog (settings.vllm_flags.catalogs.*.serve_help): ParseHelp
// must return within seconds, never panic, and give actions a catalog can
// hold: each with option strings that start with - and name one option
// (argparse's never hold a space, a comma or a control character, and the
// compact catalog form separates by them), no option in two actions, a
// known kind; and the compact form written from them must read back the
// same. Seeds: the help samples in testdata/help and the shapes below.
func FuzzParseHelp(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "help", "*.txt"))
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	f.Add("options:\n  --x X, -x X  help\n  --y, --no-y\n  --z {a,b}\n  --w [W ...]\n  --v V [V ...]\n  --u [U]\n")
	f.Add("  --a\tb  c\n  --a\n  -- x\n  --,  y\n  --b {a,{b},c}\n")
	f.Add("  --kv-transfer-config KV_TRANSFER_CONFIG\n                        The JSON config\n  --x X  ok\r\n")
	f.Fuzz(func(t *testing.T, text string) {
		done := make(chan struct{})
		var flags []*Flag
		var err error
		go func() { flags, err = ParseHelp(text); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("ParseHelp has not returned after 10 s on %d bytes", len(text))
		}
		if err != nil {
			if len(flags) != 0 {
				t.Errorf("error %v with %d actions", err, len(flags))
			}
			return
		}
		seen := map[string]bool{}
		for _, fl := range flags {
			if len(fl.Options) == 0 {
				t.Fatalf("an action with no option: %+v", fl)
			}
			for _, o := range fl.Options {
				if !strings.HasPrefix(o, "-") || strings.ContainsAny(o, " ,\t\r\n\x00") {
					t.Errorf("option %q is not one option string", o)
				}
				if seen[o] {
					t.Errorf("option %q in two actions", o)
				}
				seen[o] = true
			}
			switch fl.Kind {
			case Value, Switch, Bool, JSONOrStr:
			default:
				t.Errorf("%s: kind %q", fl.Name(), fl.Kind)
			}
		}
		text2 := Format("fuzz", []*Catalog{{Label: "team", Serve: flags}})
		cs, err := Parse(text2)
		if err != nil {
			t.Fatalf("the compact form does not read back: %v\n%s", err, text2)
		}
		back := cs[0].Serve
		if len(back) != len(flags) {
			t.Fatalf("%d actions read back, %d written:\n%s", len(back), len(flags), text2)
		}
		want := map[string]*Flag{}
		for _, fl := range flags {
			want[fl.Name()] = fl
		}
		for _, b := range back {
			w := want[b.Name()]
			if w == nil || !slices.Equal(w.Options, b.Options) || w.Kind != b.Kind || w.Nargs != b.Nargs || !slices.Equal(w.Choices, b.Choices) {
				t.Errorf("read back %+v, wrote %+v", b, w)
			}
		}
	})
}
