// Package diag is the one shape of every finding wlc reports: an error or
// warning at a file position with the CUE path it concerns, printed as
// text for people or JSON for CI annotations and editors.
package diag

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/wlcdev/wlc/internal/diag/suggest"
)

// Severity ranks a finding; errors fail `wlc vet`, warnings do not unless
// --strict.
type Severity string

const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// Diagnostic is one finding.
type Diagnostic struct {
	Severity Severity `json:"severity"`
	File     string   `json:"file"`
	Line     int      `json:"line"`
	Column   int      `json:"column"`
	// Path is the CUE path of the value concerned, e.g.
	// workloads.qwen3_5_b200.serve.tensor_parallel_size.
	Path    string `json:"path"`
	Message string `json:"message"`
}

// String renders the finding the way compilers do, so editors and CI log
// parsers can jump to it: file:line:col: severity: path: message.
func (d Diagnostic) String() string {
	loc := d.File
	if loc == "" {
		loc = "wlc"
	} else if d.Line > 0 {
		loc = fmt.Sprintf("%s:%d:%d", d.File, d.Line, d.Column)
	}
	if d.Path != "" {
		return fmt.Sprintf("%s: %s: %s: %s", loc, d.Severity, d.Path, d.Text())
	}
	return fmt.Sprintf("%s: %s: %s", loc, d.Severity, d.Text())
}

// Text is the message as printed: a finding about a name typed with a
// look-alike letter (Н200 with a Cyrillic Н), in its path or message,
// says so, since the name it shows and the one meant print the same.
func (d Diagnostic) Text() string {
	if hint := suggest.Lookalikes(d.Path + " " + d.Message); hint != "" && !strings.HasSuffix(d.Message, hint) {
		return d.Message + " " + hint
	}
	return d.Message
}

// MarshalJSON prints the message as Text does.
func (d Diagnostic) MarshalJSON() ([]byte, error) {
	type plain Diagnostic
	p := plain(d)
	p.Message = d.Text()
	return json.Marshal(p)
}

// List is an ordered set of findings.
type List []Diagnostic

// Add appends a finding.
func (l *List) Add(d Diagnostic) { *l = append(*l, d) }

// Errorf appends an error at a position.
func (l *List) Errorf(file string, line, col int, path, format string, args ...any) {
	l.Add(Diagnostic{Severity: Error, File: file, Line: line, Column: col, Path: path, Message: fmt.Sprintf(format, args...)})
}

// Warnf appends a warning at a position.
func (l *List) Warnf(file string, line, col int, path, format string, args ...any) {
	l.Add(Diagnostic{Severity: Warning, File: file, Line: line, Column: col, Path: path, Message: fmt.Sprintf(format, args...)})
}

// Count returns how many findings have severity s.
func (l List) Count(s Severity) int {
	n := 0
	for _, d := range l {
		if d.Severity == s {
			n++
		}
	}
	return n
}

// HasErrors reports whether any finding is an error.
func (l List) HasErrors() bool { return l.Count(Error) > 0 }

// Compare orders findings by file, position, path and message.
func Compare(a, b Diagnostic) int {
	return cmp.Or(
		cmp.Compare(a.File, b.File),
		cmp.Compare(a.Line, b.Line),
		cmp.Compare(a.Column, b.Column),
		cmp.Compare(a.Path, b.Path),
		cmp.Compare(a.Message, b.Message),
	)
}

// Sorted returns the findings ordered by file, position, path and message,
// without duplicates, so output is stable across runs and machines.
func (l List) Sorted() List {
	out := append(List(nil), l...)
	slices.SortStableFunc(out, Compare)
	uniq := out[:0]
	for i, d := range out {
		if i > 0 && d == out[i-1] {
			continue
		}
		uniq = append(uniq, d)
	}
	return uniq
}

// Promote turns every warning into an error (--strict).
func (l List) Promote() List {
	out := make(List, len(l))
	for i, d := range l {
		if d.Severity == Warning {
			d.Severity = Error
		}
		out[i] = d
	}
	return out
}

// WriteText prints one finding per line.
func (l List) WriteText(w io.Writer) error {
	for _, d := range l {
		if _, err := fmt.Fprintln(w, d.String()); err != nil {
			return err
		}
	}
	return nil
}

// WriteJSON prints the findings as a JSON array (never null).
func (l List) WriteJSON(w io.Writer) error {
	if l == nil {
		l = List{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(l)
}
