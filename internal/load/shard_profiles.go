package load

import (
	"maps"
	"slices"
	"strings"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/token"

	"github.com/wlcdev/wlc/internal/par"
)

// Profiles a shard leaves out. Every shard evaluates the shared files
// again, and with them every profile against #Profile, while its
// workloads read only the profiles they name (wlc.cue hands a workload
// profiles[W.profile].#facts) and the list of names (_profileNames, to
// tell a known profile from a typo). A shard whose workloads each name
// one declared profile with a string literal is given the shared files
// with only those profiles: its workloads evaluate to the same values, and
// no message they could get names the profiles left out (the unknown
// profile message, which lists the known ones, fires only for a name that
// is not declared). Evaluating 32 workloads of one profile beside the 8
// bundled profiles took 12% more time than beside that one.
//
// Where the package could read a profile any other way, every shard keeps
// every profile: a reference to `profiles` or `_profileNames` other than
// the typing lines of wlc.cue (`profiles[W.profile]`, `_profileNames:
// [for name, _ in profiles {name}]`, `#profileNames: _profileNames`), an
// identifier spelt like a profile (one profile built from another), a
// `profile` field in a shared file (a helper setting it), or profiles
// declared other than as plain fields of `profiles: {...}`.

// profilePlan is what pruning needs from the package's files.
type profilePlan struct {
	declared map[string]bool // the profiles the shared files declare
	// named maps a workload file's name to the profile literals each of
	// its workloads writes, every workload listed ("" for a profile field
	// that is not a literal).
	named map[string]map[string][]string
}

// planProfiles reads the package's files for pruning; nil says every
// shard keeps every profile. refs holds referencedNames of the workload
// files planShards walked (nil, or a file missing: walked here).
func planProfiles(shared, workloadFiles []*ast.File, refs map[*ast.File]map[string]bool) *profilePlan {
	p := &profilePlan{declared: map[string]bool{}, named: map[string]map[string][]string{}}
	for _, f := range shared {
		if !declaredProfiles(f, p.declared) {
			return nil
		}
	}
	if len(p.declared) == 0 {
		return nil
	}
	for _, f := range shared {
		if !profileRefsSafe(f, p.declared, true) {
			return nil
		}
	}
	// On every CPU, as planShards' walks.
	safe := make([]bool, len(workloadFiles))
	named := make([]map[string][]string, len(workloadFiles))
	par.Do(len(workloadFiles), func(i int) {
		if safe[i] = namesNoProfile(refs[workloadFiles[i]], p.declared) || profileRefsSafe(workloadFiles[i], p.declared, false); safe[i] {
			named[i] = workloadProfiles(workloadFiles[i])
		}
	})
	if slices.Contains(safe, false) {
		return nil
	}
	for i, f := range workloadFiles {
		p.named[f.Filename] = named[i]
	}
	return p
}

// key groups files by the profiles their workloads name: the names
// sorted and joined, or "~" (after them) when keep finds none.
func (p *profilePlan) key(files []*ast.File) string {
	keep := p.keep(files)
	if keep == nil {
		return "~"
	}
	return strings.Join(slices.Sorted(maps.Keys(keep)), "\x00")
}

// keep is the set of profiles the workloads of files name, or nil when
// one of them names none, several, a non-literal or an undeclared one.
func (p *profilePlan) keep(files []*ast.File) map[string]bool {
	if p == nil {
		return nil
	}
	per := map[string][]string{}
	for _, f := range files {
		for w, lits := range p.named[f.Filename] {
			per[w] = append(per[w], lits...)
		}
	}
	keep := map[string]bool{}
	for _, lits := range per {
		slices.Sort(lits)
		lits = slices.Compact(lits)
		if len(lits) != 1 || !p.declared[lits[0]] {
			return nil
		}
		keep[lits[0]] = true
	}
	if len(keep) == len(p.declared) {
		return nil // nothing to leave out
	}
	return keep
}

// declaredProfiles adds the profiles f declares as plain fields of a
// top-level `profiles: {...}` to into; false says f declares or could
// declare one otherwise.
func declaredProfiles(f *ast.File, into map[string]bool) bool {
	for _, d := range f.Decls {
		switch x := d.(type) {
		case *ast.EmbedDecl:
			return false // an embedded struct may hold profiles
		case *ast.Field:
			name, _, err := ast.LabelName(x.Label)
			if err != nil {
				return false // a dynamic top-level label may be profiles
			}
			if name != "profiles" {
				continue
			}
			if _, ok := plainLabel(x); !ok {
				return false
			}
			st, ok := x.Value.(*ast.StructLit)
			if !ok {
				return false
			}
			for _, e := range st.Elts {
				switch y := e.(type) {
				case *ast.CommentGroup, *ast.Attribute:
				case *ast.Field:
					if _, ok := y.Label.(*ast.ListLit); ok {
						continue // the typing pattern [Name=string]: ...
					}
					name, ok := plainLabel(y)
					if !ok {
						return false
					}
					into[name] = true
				default:
					return false // a comprehension or embedding may declare profiles
				}
			}
		}
	}
	return true
}

// namesNoProfile reports whether names (referencedNames of a workload
// file) hold no name that reads profiles, which makes the file safe
// without profileRefsSafe's walks: in a workload file only such an
// identifier can make it unsafe.
func namesNoProfile(names map[string]bool, declared map[string]bool) bool {
	if names == nil {
		return false
	}
	for n := range names {
		if readsProfiles(n, declared) {
			return false
		}
	}
	return true
}

// readsProfiles reports whether an identifier named name can read a
// profile: `profiles`, `_profileNames` or one spelt as a declared profile.
func readsProfiles(name string, declared map[string]bool) bool {
	return name == "profiles" || name == "_profileNames" || declared[name]
}

// profileRefsSafe reports whether f reads profiles only as wlc.cue's
// typing lines do (see above): any other identifier `profiles`,
// `_profileNames` or spelt as a declared profile, and in a shared file a
// `profile` field, make it unsafe.
func profileRefsSafe(f *ast.File, declared map[string]bool, isShared bool) bool {
	allowed := map[*ast.Ident]bool{}
	ast.Walk(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.IndexExpr: // profiles[W.profile]
			if id, ok := x.X.(*ast.Ident); ok && id.Name == "profiles" {
				if sel, ok := x.Index.(*ast.SelectorExpr); ok {
					if name, _, err := ast.LabelName(sel.Sel); err == nil && name == "profile" {
						allowed[id] = true
					}
				}
			}
		case *ast.Field:
			name, _, err := ast.LabelName(x.Label)
			if err != nil {
				break
			}
			switch name {
			case "#profileNames": // #profileNames: _profileNames
				if id, ok := x.Value.(*ast.Ident); ok && id.Name == "_profileNames" {
					allowed[id] = true
				}
			case "_profileNames": // _profileNames: [for name, _ in profiles {name}]
				if l, ok := x.Value.(*ast.ListLit); ok && len(l.Elts) == 1 {
					if c, ok := l.Elts[0].(*ast.Comprehension); ok && len(c.Clauses) == 1 {
						if fc, ok := c.Clauses[0].(*ast.ForClause); ok {
							if id, ok := fc.Source.(*ast.Ident); ok && id.Name == "profiles" {
								allowed[id] = true
							}
						}
					}
				}
			}
		}
		return true
	}, nil)
	safe := true
	valueIdents(f, func(fd *ast.Field) bool {
		name, _, err := ast.LabelName(fd.Label)
		safe = !(isShared && err == nil && name == "profile") // a helper may set a workload's profile
		return safe
	}, func(id *ast.Ident) bool {
		safe = !readsProfiles(id.Name, declared) || allowed[id]
		return safe
	})
	return safe
}

// workloadProfiles maps each workload of a workload file to the profile
// literals its values write: the `profile` fields of its struct literals,
// through `&` ("" for one that is not a string literal).
func workloadProfiles(f *ast.File) map[string][]string {
	out := map[string][]string{}
	var lits func(e ast.Expr) []string
	lits = func(e ast.Expr) []string {
		switch x := e.(type) {
		case *ast.BinaryExpr:
			if x.Op == token.AND {
				return append(lits(x.X), lits(x.Y)...)
			}
		case *ast.StructLit:
			var out []string
			for _, el := range x.Elts {
				if fd, ok := el.(*ast.Field); ok {
					if label, _, err := ast.LabelName(fd.Label); err == nil && label == "profile" {
						out = append(out, profileLiteral(fd))
					}
				}
			}
			return out
		}
		return nil
	}
	ws, _ := workloadFile(f)
	for _, w := range ws {
		name := workloadName(w)
		out[name] = append(out[name], lits(w.Value)...)
	}
	return out
}

// profileLiteral is the profile a `profile` field names as a plain string
// literal, else "".
func profileLiteral(fd *ast.Field) string {
	if _, ok := plainLabel(fd); !ok {
		return ""
	}
	return stringLit(fd.Value)
}

// pruneProfiles returns shared with only the profiles in keep declared:
// the files that declare profiles are copied (the originals are every
// shard's), the profiles kept are the same syntax, at the same positions.
// A field some identifier was resolved to must stay the same node (CUE's
// compiler refuses a reference to a node it was not given): only the
// `profiles` fields that lose a profile are copied, and planProfiles made
// sure no identifier refers to them or to a profile.
func pruneProfiles(shared []*ast.File, keep map[string]bool) map[*ast.File]*ast.File {
	out := map[*ast.File]*ast.File{}
	for _, f := range shared {
		var decls []ast.Decl
		for i, d := range f.Decls {
			x, ok := d.(*ast.Field)
			if !ok {
				continue
			}
			if name, ok := plainLabel(x); !ok || name != "profiles" {
				continue
			}
			st := x.Value.(*ast.StructLit) // planProfiles checked
			elts := slices.DeleteFunc(slices.Clone(st.Elts), func(e ast.Decl) bool {
				y, ok := e.(*ast.Field)
				if !ok {
					return false
				}
				name, ok := plainLabel(y)
				return ok && !keep[name]
			})
			if len(elts) == len(st.Elts) {
				// Nothing left out (wlc.cue's typing pattern): the
				// field itself, which identifiers were resolved to.
				continue
			}
			if decls == nil {
				decls = slices.Clone(f.Decls)
			}
			st2, x2 := *st, *x
			st2.Elts = elts
			x2.Value = &st2
			decls[i] = &x2
		}
		if decls != nil {
			f2 := *f
			f2.Decls = decls
			out[f] = &f2
		}
	}
	return out
}
