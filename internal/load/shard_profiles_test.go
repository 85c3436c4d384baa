package load

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/parser"
)

// TestProfilePruning: a shard keeps only the profiles its workloads name
// with literals, and every profile wherever the package could read one
// otherwise (the equality of the sharded and one-package loads is
// TestShardedLoadBundled's and TestShardedLoadBroken's).
func TestProfilePruning(t *testing.T) {
	const wlc = `package workloads

import "github.com/wlcdev/wlc/schema"

profiles: [Name=string]: schema.#Profile & {name: Name}
workloads: [Name=string]: W={schema.#Workload & {name: Name, #profile: profiles[W.profile].#facts, #profileNames: _profileNames}}
_profileNames: [for name, _ in profiles {name}]
`
	const profiles = `package workloads

profiles: {
	H200: {hardware: "H200"}
	B200: {hardware: "B200"}
	"MI300X": {hardware: "MI300X"}
}
`
	const helper = "package workloads\n\n_base: {model: \"m\"}\n"
	for _, c := range []struct {
		name     string
		shared   []string // beside wlc and profiles
		profiles string   // replaces profiles
		files    []string // one shard's workload files
		want     []string // nil: every profile
	}{
		{name: "a literal", files: []string{`package workloads
workloads: a: {profile: "H200", model: "m"}`}, want: []string{"H200"}},
		{name: "through & and a helper", shared: []string{helper}, files: []string{`package workloads
workloads: a: _base & {profile: "MI300X"}
workloads: b: profile: "H200"`}, want: []string{"H200", "MI300X"}},
		{name: "a workload in two files", files: []string{`package workloads
workloads: a: {profile: "B200"}`, `package workloads
workloads: a: {model: "m"}`}, want: []string{"B200"}},
		{name: "every profile named", files: []string{`package workloads
workloads: a: profile: "H200"
workloads: b: profile: "B200"
workloads: c: profile: "MI300X"`}},
		{name: "no literal", shared: []string{helper}, files: []string{`package workloads
workloads: a: _base`}},
		{name: "a reference", shared: []string{"package workloads\n\n_p: \"H200\"\n"}, files: []string{`package workloads
workloads: a: profile: _p`}},
		{name: "two literals", files: []string{`package workloads
workloads: a: profile: "H200"`, `package workloads
workloads: a: profile: "B200"`}},
		{name: "an unknown profile", files: []string{`package workloads
workloads: a: profile: "H100"`}},
		{name: "a helper sets profile", shared: []string{"package workloads\n\n_base: {profile: \"B200\"}\n"}, files: []string{`package workloads
workloads: a: _base & {profile: "H200"}`}},
		{name: "a profile read by name", shared: []string{"package workloads\n\n_q: profiles.H200.queue\n"}, files: []string{`package workloads
workloads: a: profile: "H200"`}},
		{name: "a profile built from another", profiles: `package workloads

profiles: {
	H200: {hardware: "H200"}
	B200: H200 & {hardware: "B200"}
}
`, files: []string{`package workloads
workloads: a: profile: "B200"`}},
		{name: "profiles by comprehension", profiles: `package workloads

profiles: {for n in ["H200", "B200"] {(n): {hardware: n}}}
`, files: []string{`package workloads
workloads: a: profile: "H200"`}},
		{name: "a workload reads the names", files: []string{`package workloads
workloads: a: {profile: "H200", description: "\(len(_profileNames))"}`}},
		{name: "a workload reads a profile", files: []string{`package workloads
workloads: a: {profile: "H200", description: profiles.B200.hardware}`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			parse := func(name, src string) *ast.File {
				f, err := parser.ParseFile(name, src, parser.ParseComments)
				if err != nil {
					t.Fatal(err)
				}
				return f
			}
			ps := profiles
			if c.profiles != "" {
				ps = c.profiles
			}
			shared := []*ast.File{parse("wlc.cue", wlc), parse("profiles.cue", ps)}
			for i, s := range c.shared {
				shared = append(shared, parse("shared"+string(rune('a'+i))+".cue", s))
			}
			var files []*ast.File
			for i, s := range c.files {
				files = append(files, parse("w"+string(rune('a'+i))+".cue", s))
			}
			keep := planProfiles(shared, files, nil).keep(files)
			// planShards hands over the names its walk found: the plan
			// must not change with them.
			refs := map[*ast.File]map[string]bool{}
			for _, f := range files {
				refs[f] = referencedNames(f)
			}
			if k := planProfiles(shared, files, refs).keep(files); !maps.Equal(k, keep) {
				t.Fatalf("keep = %v with planShards' names, %v without", slices.Sorted(maps.Keys(k)), slices.Sorted(maps.Keys(keep)))
			}
			got := slices.Sorted(maps.Keys(keep))
			if c.want == nil {
				if keep != nil {
					t.Fatalf("keep = %v, want every profile", got)
				}
				return
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("keep = %v, want %v", got, c.want)
			}
			// The pruned files declare exactly the kept profiles, and
			// the originals are untouched.
			repl := pruneProfiles(shared, keep)
			var declared []string
			for _, f := range shared {
				if r, ok := repl[f]; ok {
					f = r
				}
				names := map[string]bool{}
				if !declaredProfiles(f, names) {
					t.Fatalf("%s no longer declares plain profiles", f.Filename)
				}
				declared = append(declared, slices.Sorted(maps.Keys(names))...)
			}
			if !slices.Equal(declared, c.want) {
				t.Errorf("the pruned shared files declare %v, want %v", declared, c.want)
			}
			orig := map[string]bool{}
			declaredProfiles(shared[1], orig)
			if len(orig) != strings.Count(ps, "hardware:") {
				t.Errorf("the original profiles file lost profiles: %v", slices.Sorted(maps.Keys(orig)))
			}
		})
	}
}

// TestPlanShardsGroupsProfiles: shards are made of files whose workloads
// name the same profiles (package order within a group, files of one
// workload together), so each shard evaluates few profiles; where the
// profiles cannot be read, package order.
func TestPlanShardsGroupsProfiles(t *testing.T) {
	const shared = `package workloads

profiles: [Name=string]: {name: Name}
workloads: [Name=string]: W={#profile: profiles[W.profile].#facts, #profileNames: _profileNames}
_profileNames: [for name, _ in profiles {name}]
profiles: {
	H200: {}
	B200: {}
	MI300X: {}
}
`
	parse := func(name, src string) *ast.File {
		f, err := parser.ParseFile(name, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	w := func(name, body string) *ast.File {
		return parse(name+".cue", "package workloads\n\nworkloads: "+body+"\n")
	}
	plan := func(files ...*ast.File) [][]string {
		p := planShards(append([]*ast.File{parse("wlc.cue", shared)}, files...), 2, 1)
		var out [][]string
		for _, s := range p.shards {
			var names []string
			for _, f := range s {
				names = append(names, strings.TrimSuffix(f.Filename, ".cue"))
			}
			out = append(out, names)
		}
		return out
	}
	for _, c := range []struct {
		name  string
		files []*ast.File
		want  string
	}{
		{"by profile", []*ast.File{w("a", `a: profile: "H200"`), w("b", `b: profile: "B200"`), w("c", `c: profile: "H200"`), w("d", `d: profile: "B200"`), w("e", `e: profile: "MI300X"`)},
			"[[b d] [a c] [e]]"},
		{"a workload in two files", []*ast.File{w("a", `a: profile: "H200"`), w("b", `b: profile: "B200"`), w("c", `b: model: "m"`), w("d", `d: profile: "H200"`)},
			"[[b c] [a d]]"},
		{"unknown profiles last", []*ast.File{w("a", `a: profile: _p`), w("b", `b: profile: "B200"`), w("c", `c: profile: "B200"`)},
			"[[b c] [a]]"},
		{"profiles read otherwise: package order", []*ast.File{w("a", `a: {profile: "H200", queue: profiles.B200.queue}`), w("b", `b: profile: "B200"`), w("c", `c: profile: "H200"`)},
			"[[a b] [c]]"},
	} {
		if got := fmt.Sprint(plan(c.files...)); got != c.want {
			t.Errorf("%s: shards %s, want %s", c.name, got, c.want)
		}
	}
}
