package docker

import (
	"github.com/wlcdev/wlc/backends/runner"
	"github.com/wlcdev/wlc/internal/plan"
)

// Accepts implements backends.Accepter: a docker host runs one node.
func (Backend) Accepts(w plan.Workload) error { return runner.OneNode(w, oneNode) }
