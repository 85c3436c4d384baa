package slurm

import (
	"fmt"

	"github.com/wlcdev/wlc/internal/plan"
)

// Accepts implements backends.Accepter: sbatch needs a Slurm profile.
func (Backend) Accepts(w plan.Workload) error {
	if w.Profile.Runtime != "slurm" || w.Profile.Slurm == nil {
		return fmt.Errorf("profile %s uses the %s runtime; the slurm backend exports workloads on slurm profiles", w.Profile.Name, w.Profile.Runtime)
	}
	return nil
}
