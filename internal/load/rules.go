package load

import (
	"fmt"
	"slices"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/token"

	"github.com/wlcdev/wlc/internal/load/cuedecode"

	"github.com/wlcdev/wlc/internal/check"
	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/schema"
)

// The loader's side of the Go rules (internal/check): it hands them the
// decoded values and places each finding at the user's field.

func (l *loader) pos(v cue.Value, path string) token.Pos {
	if path == "" {
		// The workload itself: its label in the user's file, not the
		// pattern in wlc.cue that types every workload.
		if pos := l.labelPos(v.Path().Selectors()); pos.IsValid() {
			return pos
		}
	}
	p := pathOf(path)
	if p.Err() != nil {
		return token.NoPos
	}
	for {
		if pos := l.userPos(v.LookupPath(p)); pos.IsValid() {
			return pos
		}
		sels := p.Selectors()
		if len(sels) <= 1 {
			return l.userPos(v.LookupPath(pathOf("profile")))
		}
		p = cue.MakePath(sels[:len(sels)-1]...)
	}
}

// position is where a finding is reported, as printed (File relative to
// the working directory): a shard keeps these, not CUE positions.
type position struct {
	File         string
	Line, Column int
}

// at is where pos is reported (the zero position when pos is invalid).
func (l *loader) at(pos token.Pos) position {
	if !pos.IsValid() {
		return position{}
	}
	return position{l.rel(pos.Filename()), pos.Line(), pos.Column()}
}

func (l *loader) report(sev diag.Severity, base string, v cue.Value, field, format string, args ...any) {
	at := l.at(l.pos(v, field))
	d := diag.Diagnostic{Severity: sev, Path: base, Message: fmt.Sprintf(format, args...), File: at.File, Line: at.Line, Column: at.Column}
	if field != "" {
		d.Path = base + "." + field
	}
	l.res.Diags.Add(d)
}

// place reports the findings of a rule on v (the workload or profile at
// base), in order, each at the user's field.
func (l *loader) place(base string, v cue.Value, ds []check.Diagnostic) {
	for _, d := range ds {
		if d.Value && l.blamed(base, v, d.Path) {
			continue
		}
		l.report(d.Severity, base, v, d.Path, "%s", d.Message)
	}
}

// blamed reports whether an error of the value at base already sits at
// field's position: the schema's own rule blamed it (of this workload:
// another one's error at a helper both use is not this one's, and a
// sharded load would not see it).
func (l *loader) blamed(base string, v cue.Value, field string) bool {
	pos := l.pos(v, field)
	if !pos.IsValid() {
		return false
	}
	file := l.rel(pos.Filename())
	for _, d := range l.res.Diags {
		if d.Severity == diag.Error && d.File == file && d.Line == pos.Line() && d.Column == pos.Column() && (d.Path == base || strings.HasPrefix(d.Path, base+".")) {
			return true
		}
	}
	return false
}

func (l *loader) env() *check.Env {
	return &check.Env{Profiles: l.res.Profiles, Hardware: l.res.Hardware, VLLMFlags: l.opts.VLLMFlags, Overrides: l.opts.Overrides}
}

// ruleInput is w as the rules read it, with what only its value says:
// for a workload that did not decode, its vllm_bench configs' args keys;
// on an SGLang server, the serve fields the user wrote.
func (l *loader) ruleInput(wv cue.Value, w *Workload, decoded bool) *check.Workload {
	in := &check.Workload{Workload: w.Workload, Own: w.ownExtraArgs(), Decoded: decoded}
	if !decoded {
		for _, cv := range elements(wv.LookupPath(pathOf("vllm_bench.configs"))) {
			var keys []string
			it, err := cv.LookupPath(pathOf("args")).Fields()
			for err == nil && it.Next() {
				keys = append(keys, it.Selector().Unquoted())
			}
			in.ArgKeys = append(in.ArgKeys, keys)
		}
		it, err := wv.LookupPath(pathOf("vllm_bench.sweep.args")).Fields()
		for err == nil && it.Next() {
			if in.SweepArgs == nil {
				in.SweepArgs = map[string]any{}
			}
			var v any = true // a key alone, when its value does not decode
			if it.Value().Validate(cue.Concrete(true)) == nil {
				_ = cuedecode.Decode(it.Value(), &v)
			}
			in.SweepArgs[it.Selector().Unquoted()] = v
		}
	}
	if w.Engine == schema.EngineSGLang {
		if it, err := wv.LookupPath(pathOf("serve")).Fields(); err == nil {
			for it.Next() {
				if l.userPos(it.Value()).IsValid() {
					in.ServeWritten = append(in.ServeWritten, it.Selector().String())
				}
			}
		}
	}
	return in
}

func (l *loader) checkProfile(pv cue.Value, p schema.Profile) {
	l.place("profiles."+check.Label(p.Name), pv, check.ProfileRules(&p))
	l.vetProfile(pv, p)
}

// checkFields applies the rules that read single fields to a workload
// that failed validation, decoded as far as it goes (see
// check.FieldRules).
func (l *loader) checkFields(wv cue.Value, w *Workload) {
	base := "workloads." + check.Label(w.Name)
	l.engineOptions(wv, base, w, false) // first: it renders serve's option fields
	l.place(base, wv, check.FieldRules(l.ruleInput(wv, w, false), l.env()))
}

// checkWorkload applies the Go rules and the backends' to a decoded
// workload; it reports whether w is valid.
func (l *loader) checkWorkload(wv cue.Value, w *Workload) bool {
	before := l.res.Diags.Count(diag.Error)
	base := "workloads." + check.Label(w.Name)
	l.engineOptions(wv, base, w, true) // first: it renders serve's option fields
	l.place(base, wv, check.WorkloadRules(l.ruleInput(wv, w, true), l.env()))
	if prof, known := l.res.Profiles[w.Profile]; known {
		l.vetWorkload(wv, base, w, prof)
	}
	return l.res.Diags.Count(diag.Error) == before
}

// fieldsAt are the positions the rules across workloads report at,
// keyed by workload and field ("" the workload itself): taken while the
// workload's CUE value is alive, since a shard's values are gone when the
// rules run.
type fieldsAt map[[2]string]position

// checkPorts applies check.Ports to the loaded workloads.
func (l *loader) checkPorts(ws []Workload, at fieldsAt) {
	var served []check.Served
	for _, w := range ws {
		prof, ok := l.res.Profiles[w.Profile]
		if w.Port == 0 || !ok {
			continue
		}
		s := check.Served{Name: w.Name, Port: w.Port, Pool: fmt.Sprintf("queue %q", prof.Queue), GPUs: w.GPUsPerNode,
			HostGPUs: l.res.Hardware[prof.Hardware].GPUsPerNode, File: w.File, Line: w.Line}
		if c := prof.Slurm; c != nil && prof.Runtime == "slurm" {
			s.Pool, s.Exclusive = fmt.Sprintf("Slurm partition %q", c.Partition), c.Exclusive
			if c.Partition == "" {
				s.Pool = "the Slurm cluster's default partition"
			}
		}
		served = append(served, s)
	}
	for name, d := range check.Ports(served) {
		l.addAt(at[[2]string{name, d.Path}], "workloads."+check.Label(name)+"."+d.Path, d.Message)
	}
}

// checkRunNames applies check.RunNames to the loaded workloads and
// returns the names of those refused. at holds where each workload's
// clash is reported (check.RunNameField).
func (l *loader) checkRunNames(ws []Workload, at fieldsAt) map[string]bool {
	var named []check.Named
	for _, w := range slices.Concat(ws, l.res.refused) {
		named = append(named, check.Named{Name: w.Name, RunName: w.RunName(), Field: check.RunNameField(&w.Workload), File: w.File, Line: w.Line})
	}
	refused := map[string]bool{}
	for name, d := range check.RunNames(named) {
		path := "workloads." + check.Label(name)
		if d.Path != "" {
			path += "." + d.Path
		}
		l.addAt(at[[2]string{name, d.Path}], path, d.Message)
		refused[name] = true
	}
	return refused
}
