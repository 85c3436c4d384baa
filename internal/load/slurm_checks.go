package load

import (
	"cuelang.org/go/cue"

	"github.com/wlcdev/wlc/backends/slurm"
	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/schema"
)

// checkSlurm applies the vet-time rules of Slurm profiles that need Go
// (comparisons across profile and workload, and every value that reaches
// an #SBATCH line or srun's argv); the rules live in backends/slurm, whose
// Lower applies them again. Profile findings point at the profile and are
// reported once however many workloads use it.
func (l *loader) checkSlurm(wv cue.Value, base string, w *Workload, prof schema.Profile) {
	if prof.Runtime != "slurm" || prof.Slurm == nil {
		return
	}
	hw := l.res.Hardware[prof.Hardware]
	pbase := "profiles." + quoteLabel(prof.Name)
	pv := l.pkg.LookupPath(cue.MakePath(cue.Str("profiles"), cue.Str(prof.Name)))
	findings := append(slurm.CheckCluster(prof.Slurm), slurm.CheckWorkload(w.Nodes, w.GPUsPerNode, w.StartupTimeoutS, hw, prof.Slurm)...)
	for _, f := range findings {
		sev := diag.Error
		if f.Warning {
			sev = diag.Warning
		}
		if !f.ProfileField {
			l.report(sev, base, wv, f.Field, "%s", f.Message)
			continue
		}
		if l.reported(pbase + "." + f.Field + "\x00" + f.Message) {
			continue
		}
		l.report(sev, pbase, pv, f.Field, "%s", f.Message)
	}
}

// reported says whether a profile finding was already reported (for an
// earlier workload on the same profile).
func (l *loader) reported(key string) bool {
	for _, d := range l.res.Diags {
		if d.Path+"\x00"+d.Message == key {
			return true
		}
	}
	return false
}
