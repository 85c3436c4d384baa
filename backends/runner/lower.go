package runner

import (
	"fmt"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/internal/plan"
)

// Lower renders one job script per workload, <name>.sh, mode 0755: the
// Lower of every backend whose artifact is a runner script.
func Lower(ws []plan.Workload, script func(plan.Workload) ([]byte, error)) ([]backends.Artifact, error) {
	var out []backends.Artifact
	for _, w := range ws {
		data, err := script(w)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", w.Name, err)
		}
		out = append(out, backends.Artifact{Path: w.Name + ".sh", Data: data, Mode: 0o755})
	}
	return out, nil
}

// SingleNode renders w's script on a one-node runtime: refused when w
// spans nodes (why says what to use instead), a skip notice when the
// build has no image for w's platform, else rt's script.
func SingleNode(w plan.Workload, backend, why string, rt func(plan.Workload) (Runtime, error)) ([]byte, error) {
	r, skipped, err := singleNode(w, backend, why, rt)
	if err != nil || skipped != nil {
		return skipped, err
	}
	return Script(w, r)
}

// SingleNodeSplit is SingleNode's script as a Split (SplitScript; a skip
// notice stands alone), the runtime in runtimeDir relative to the script.
func SingleNodeSplit(w plan.Workload, backend, why string, rt func(plan.Workload) (Runtime, error), runtimeDir string) (Split, error) {
	r, skipped, err := singleNode(w, backend, why, rt)
	if err != nil || skipped != nil {
		return Split{Job: skipped}, err
	}
	return SplitScript(w, r, runtimeDir)
}

// singleNode is both forms' start: w refused (OneNode), its skip notice
// (an image the build does not provide), or the runtime its script uses.
func singleNode(w plan.Workload, backend, why string, rt func(plan.Workload) (Runtime, error)) (Runtime, []byte, error) {
	if err := OneNode(w, why); err != nil {
		return Runtime{}, nil, err
	}
	if w.Image.Skip != "" {
		s, err := Skipped(w, backend, w.Image.Skip) // never empty
		return Runtime{}, s, err
	}
	r, err := rt(w)
	return r, nil, err
}

// OneNode refuses a workload spanning nodes on a one-node runtime; why
// says what the runtime runs. It is also the backends' Accepts.
func OneNode(w plan.Workload, why string) error {
	if w.Disagg != nil {
		return fmt.Errorf("serves prefill/decode-disaggregated (%d instances on %d nodes behind a router), which runs only as Slurm steps; %s (use the slurm backend, or buildkite on a slurm profile)", len(w.Disagg.Instances), w.Nodes, why)
	}
	if w.Nodes > 1 {
		return fmt.Errorf("spans %d nodes; %s (use the slurm backend)", w.Nodes, why)
	}
	return nil
}
