package load

import "cuelang.org/go/cue"

// progress tells the budget which workload is being evaluated, and where
// the user wrote it (its label; reading it evaluates nothing).
func (l *loader) progress(wv cue.Value) {
	if l.opts.Progress == nil {
		return
	}
	sels := wv.Path().Selectors()
	what := "workload " + wv.Path().String()
	if len(sels) > 0 {
		what = "workload " + sels[len(sels)-1].Unquoted()
	}
	file := ""
	if pos := l.labelPos(sels); pos.IsValid() {
		file = l.rel(pos.Filename())
	}
	l.opts.Progress.Set(file, what)
}
