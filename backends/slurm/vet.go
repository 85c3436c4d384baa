package slurm

import (
	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/schema"
)

// VetProfile reports CheckCluster's findings on a Slurm profile at vet
// time (wlc vet passes every backend implementing it to the loader), so a
// value Lower would refuse is an error at the user's field. Paths are
// relative to the profile.
func (Backend) VetProfile(p schema.Profile, hw schema.Hardware) []diag.Diagnostic {
	if p.Runtime != "slurm" || p.Slurm == nil {
		return nil
	}
	return diagnostics(CheckCluster(p.Slurm, hw))
}

// VetWorkload reports CheckWorkload's findings on a workload that runs on
// a Slurm profile. Paths are relative to the workload.
func (Backend) VetWorkload(w schema.Workload, p schema.Profile, hw schema.Hardware) []diag.Diagnostic {
	if p.Runtime != "slurm" || p.Slurm == nil {
		return nil
	}
	return diagnostics(CheckWorkload(w.Nodes, w.GPUsPerNode, w.StartupTimeoutS, hw, p.Slurm))
}

func diagnostics(fs []Finding) []diag.Diagnostic {
	var out []diag.Diagnostic
	for _, f := range fs {
		sev := diag.Error
		if f.Warning {
			sev = diag.Warning
		}
		out = append(out, diag.Diagnostic{Severity: sev, Path: f.Field, Message: f.Message})
	}
	return out
}
