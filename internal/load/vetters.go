package load

import (
	"cuelang.org/go/cue"

	"github.com/wlcdev/wlc/internal/check"
	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/schema"
)

// A Vetter is a backend's vet-time rules: what its Lower would refuse or
// warn about for a profile or a workload, reported by wlc vet at the
// user's field. Backends implement it and cmd/wlc passes them in
// (Options.Vetters): the loader imports no backend. A finding's Path is
// relative to the profile or workload; Severity and Message are kept.
type Vetter interface {
	VetProfile(p schema.Profile, hw schema.Hardware) []diag.Diagnostic
	VetWorkload(w schema.Workload, p schema.Profile, hw schema.Hardware) []diag.Diagnostic
}

// vetProfile reports the backends' findings on a profile.
func (l *loader) vetProfile(pv cue.Value, p schema.Profile) {
	base := "profiles." + check.Label(p.Name)
	for _, v := range l.opts.Vetters {
		for _, d := range v.VetProfile(p, l.res.Hardware[p.Hardware]) {
			l.report(d.Severity, base, pv, d.Path, "%s", d.Message)
		}
	}
}

// vetWorkload reports the backends' findings on a workload.
func (l *loader) vetWorkload(wv cue.Value, base string, w *Workload, p schema.Profile) {
	for _, v := range l.opts.Vetters {
		for _, d := range v.VetWorkload(w.Workload, p, l.res.Hardware[p.Hardware]) {
			l.report(d.Severity, base, wv, d.Path, "%s", d.Message)
		}
	}
}
