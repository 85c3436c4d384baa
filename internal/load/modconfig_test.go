package load

import (
	"sync"
	"testing"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/load"
	"cuelang.org/go/cue/parser"

	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// TestModuleParserConfig: the parser configuration the loader reads from
// module.cue (readModuleFile's parserConfig) is the one cue/load parses
// the module's files with, for the ways module.cue is written; where it
// cannot say, it says so (and the load parses as the loader asks).
func TestModuleParserConfig(t *testing.T) {
	for _, tc := range []struct {
		name, module string
		known        bool
	}{
		{"wlc init's", "module: \"example.com/w@v0\"\nlanguage: version: \"v0.17.0\"\n", true},
		{"a language struct, deps", "module: \"example.com/w\"\n\nlanguage: {\n\tversion: \"v0.12.0\"\n}\n\ndeps: {}\n", true},
		{"a commented-out version", "// language: version: \"v0.9.0\"\nmodule: \"example.com/w@v0\"\nlanguage: version: \"v0.16.0\"\n", true},
		{"quoted labels", "\"module\": \"example.com/w@v0\"\n\"language\": {\"version\": \"v0.17.1\"}\n", true},
		// cue/load refuses these; the guess is no config, not a wrong one.
		{"no language version", "module: \"example.com/w@v0\"\n", false},
		{"no module", "language: version: \"v0.17.0\"\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			testenv.WriteFiles(t, root, map[string]string{
				"cue.mod/module.cue": tc.module,
				"pkg/a.cue":          "package pkg\n\n// A.\na: 1\n",
			})
			var (
				mu    sync.Mutex
				asked []parser.Config
			)
			parse := func(name string, src any, cfg parser.Config) (*ast.File, error) {
				if cfg.Mode&(parser.PackageClauseOnly|parser.ImportsOnly) == 0 {
					mu.Lock()
					asked = append(asked, cfg)
					mu.Unlock()
				}
				return parser.ParseFile(name, src, cfg)
			}
			got, ok := readModuleFile(root).parserConfig()
			if ok != tc.known {
				t.Fatalf("parserConfig: known %v, want %v", ok, tc.known)
			}
			if !tc.known {
				return
			}
			insts := load.Instances([]string{"./pkg"}, &load.Config{Dir: root, ParseFile: parse})
			if err := insts[0].Err; err != nil {
				t.Fatalf("the module does not load: %v", err)
			}
			if len(asked) == 0 {
				t.Fatal("cue/load parsed no file whole")
			}
			if got != asked[0] {
				t.Errorf("parserConfig = %+v, cue/load asked for %+v", got, asked[0])
			}
		})
	}
}
