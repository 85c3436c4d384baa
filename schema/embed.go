// Package schema holds wlc's CUE schema (the single source of truth for
// workloads, profiles and the hardware catalog) and the Go types that
// mirror it. The .cue files are embedded so wlc works from any directory;
// the same files are a normal CUE package the plain cue CLI can vet.
package schema

import "embed"

// Files are the schema's .cue sources, overlaid at <module>/schema when a
// workloads package is loaded, so the binary's schema always wins.
//
//go:embed *.cue
var Files embed.FS

// ImportPath is the CUE import path of this package.
const ImportPath = "github.com/wlcdev/wlc/schema"

// ModulePath is the CUE module path of a wlc repository.
const ModulePath = "github.com/wlcdev/wlc@v0"

// CopyDir is where a workloads repository keeps its copy of these files,
// relative to its module root: cue.mod/gen, where CUE finds the packages
// of modules it does not fetch.
const CopyDir = "cue.mod/gen/" + ImportPath

// The typing lines of a workloads package's wlc.cue, as wlc init writes
// them: they type its profiles and workloads with this schema and hand each
// workload the profile it names (and the names of all, for the "unknown
// profile" message). wlc vet quotes them when a package lacks them.
const (
	ProfilesTyping     = "profiles: [Name=string]: schema.#Profile & {name: Name}"
	WorkloadsTyping    = "workloads: [Name=string]: W={schema.#Workload & {name: Name, #profile: profiles[W.profile].#facts, #profileNames: _profileNames}}"
	ProfileNamesTyping = "_profileNames: [for name, _ in profiles {name}]"
)
