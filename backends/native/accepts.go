package native

import (
	"github.com/wlcdev/wlc/backends/runner"
	"github.com/wlcdev/wlc/internal/plan"
)

// Accepts implements backends.Accepter: one server process, one node.
func (Backend) Accepts(w plan.Workload) error { return runner.OneNode(w, oneNode) }
