package native

import (
	"fmt"

	"github.com/wlcdev/wlc/internal/plan"
)

// Accepts implements backends.Accepter: one server process, one node.
func (Backend) Accepts(w plan.Workload) error {
	if w.Nodes > 1 {
		return fmt.Errorf("spans %d nodes; %s (use the slurm backend)", w.Nodes, oneNode)
	}
	return nil
}
