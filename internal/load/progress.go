package load

import (
	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/token"
)

// progress tells the budget which workload is being evaluated, and where
// the user wrote it (its label; reading it evaluates nothing). wv is an
// entry of workloads; labels is the files' index (see labelIndex):
// labelPos searched every file for every workload, a shard's 32
// workloads times its 35 files, 1% of a cold vet of 1,000.
func (l *loader) progress(wv cue.Value, labels map[[2]string]token.Pos) {
	if l.opts.Progress == nil {
		return
	}
	what, file := "workload "+wv.Path().String(), ""
	if sels := wv.Path().Selectors(); len(sels) == 2 && sels[0].IsString() && sels[1].IsString() {
		what = "workload " + sels[1].Unquoted()
		if pos := labels[[2]string{sels[0].Unquoted(), sels[1].Unquoted()}]; pos.IsValid() {
			file = l.rel(pos.Filename())
		}
	}
	l.opts.Progress.Set(file, what)
}

// labelIndex maps each two-label path (workloads.w) to the label labelPos
// finds for it in files: the same fields searched (eachField), in the
// same order, once for every path, the first found kept.
func labelIndex(files []*ast.File) map[[2]string]token.Pos {
	idx := map[[2]string]token.Pos{}
	for _, f := range files {
		eachField(f.Decls, func(parent string, fd *ast.Field) bool {
			eachFieldIn(fd.Value, func(name string, g *ast.Field) bool {
				if k := [2]string{parent, name}; !idx[k].IsValid() {
					idx[k] = g.Label.Pos()
				}
				return true
			})
			return true
		})
	}
	return idx
}
