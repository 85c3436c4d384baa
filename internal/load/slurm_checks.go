package load

import (
	"cuelang.org/go/cue"

	"github.com/wlcdev/wlc/schema"
)

// checkSlurm applies the vet-time rules of Slurm profiles that need Go
// (comparisons across profile and workload); report findings with
// l.report(diag.Error|diag.Warning, base, wv, "<field path>", format, args...).
func (l *loader) checkSlurm(wv cue.Value, base string, w *Workload, prof schema.Profile) {
	if prof.Runtime != "slurm" || prof.Slurm == nil {
		return
	}
}
