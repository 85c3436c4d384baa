package docker

import (
	"fmt"

	"github.com/wlcdev/wlc/internal/plan"
)

// Accepts implements backends.Accepter: a docker host runs one node.
func (Backend) Accepts(w plan.Workload) error {
	if w.Nodes > 1 {
		return fmt.Errorf("spans %d nodes; %s (use the slurm backend)", w.Nodes, oneNode)
	}
	return nil
}
