// Package backends defines what a backend is: a pure function from
// resolved workloads to named artifacts. Backends never read CUE, the
// filesystem or the process environment; everything they need arrives in
// plan.Workload and Options.
package backends

import (
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/wlcdev/wlc/internal/plan"
)

// Artifact is one generated file.
type Artifact struct {
	// Path is relative and slash-separated, e.g. "qwen3_5_b200.sh".
	Path string
	Data []byte
	Mode fs.FileMode
}

// Options are export-time inputs besides the workloads.
type Options struct {
	// Env is a snapshot of the exporting process's environment, for the
	// overrides a backend honours (e.g. B200_QUEUE); never read os.Getenv.
	Env map[string]string
	// WorkloadsDir is the workloads directory as the user named it, for
	// backends whose output re-runs wlc on the agent (e.g. Buildkite).
	WorkloadsDir string
}

// Backend lowers resolved workloads into artifacts.
type Backend interface {
	// Name is the --backend value.
	Name() string
	// Summary is one line for `wlc export --help`.
	Summary() string
	// Lower must be deterministic: the same input gives the same bytes.
	Lower(ws []plan.Workload, opts Options) ([]Artifact, error)
}

// CheckArtifacts rejects artifact paths that could escape the output
// directory or collide.
func CheckArtifacts(as []Artifact) error {
	seen := map[string]bool{}
	for _, a := range as {
		clean := path.Clean(a.Path)
		if a.Path == "" || clean != a.Path || path.IsAbs(a.Path) || strings.HasPrefix(clean, "../") || clean == ".." {
			return fmt.Errorf("backend produced an unsafe artifact path %q", a.Path)
		}
		if seen[clean] {
			return fmt.Errorf("backend produced %q twice", a.Path)
		}
		seen[clean] = true
	}
	return nil
}

// Accepter is implemented by backends that lower only some workloads (a
// docker host runs one node; sbatch needs a Slurm profile). Without an
// explicit selection, export skips the workloads a backend does not accept
// and says so; an explicitly selected one is an error.
type Accepter interface {
	// Accepts returns why w cannot be lowered, or nil.
	Accepts(w plan.Workload) error
}

// Idler is implemented by backends whose output a CI step runs (Buildkite's
// upload step runs upload.sh). When no job is selected (export
// --changed-since found none changed), export -o still writes what that
// step runs, doing nothing but saying why, so the step succeeds.
type Idler interface {
	// Idle is that output; why says why nothing runs.
	Idle(why string) []Artifact
}
