package schema

import (
	"fmt"
	"io/fs"
	"sort"

	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/parser"
)

// Instance is the embedded schema package as an unbuilt instance (its
// files named schema/<file> in positions), for code that reads the schema
// without a workloads module: the binary's own, whatever a module holds.
func Instance() (*build.Instance, error) {
	return EmbeddedInstance(Files, ImportPath, "schema", "schema/")
}

// EmbeddedInstance is an unbuilt instance of package pkg made of the .cue
// files of files, in name order; dir prefixes their names in positions.
func EmbeddedInstance(files fs.FS, importPath, pkg, dir string) (*build.Instance, error) {
	inst := build.NewContext().NewInstance("", nil)
	inst.ImportPath = importPath
	inst.PkgName = pkg
	names, err := fs.Glob(files, "*.cue")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	for _, n := range names {
		src, err := fs.ReadFile(files, n)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(dir+n, src, parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("embedded schema: %w", err)
		}
		if err := inst.AddSyntax(f); err != nil {
			return nil, fmt.Errorf("embedded schema: %w", err)
		}
	}
	return inst, nil
}
