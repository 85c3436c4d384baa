// Package selection picks workloads the way perf-eval users know it:
// WORKLOADS / --workloads entries (comma or newline separated) naming a
// workload, its file stem or its file path; otherwise the nightly set.
package selection

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/wlcdev/wlc/internal/diag/suggest"
)

// Candidate is what an entry can match.
type Candidate struct {
	Name    string
	File    string // slash path of the defining file
	Nightly bool
}

// Split parses a WORKLOADS value: comma or newline separated, blanks and
// surrounding space ignored.
func Split(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' || r == '\r' }) {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// Pick returns the names selected by entries, in the order given (a
// workload named twice runs once). Every unknown entry is reported, each
// with the closest names.
func Pick(cands []Candidate, entries []string) ([]string, error) {
	var out, bad []string
	seen := map[string]bool{}
	for _, e := range entries {
		matched := false
		for _, c := range cands {
			if match(c, e) {
				matched = true
				if !seen[c.Name] {
					seen[c.Name] = true
					out = append(out, c.Name)
				}
			}
		}
		if !matched {
			msg := fmt.Sprintf("unknown workload %q", e)
			if s := Closest(cands, e, 3); len(s) > 0 {
				msg += "; did you mean " + strings.Join(s, ", ") + "?"
			}
			bad = append(bad, msg)
		}
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(bad, "\n"))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the selection is empty; name workloads with --workloads or WORKLOADS")
	}
	return out, nil
}

// Nightly returns the nightly workloads, sorted by name.
func Nightly(cands []Candidate) ([]string, error) {
	var out []string
	for _, c := range cands {
		if c.Nightly {
			out = append(out, c.Name)
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		return nil, fmt.Errorf("no workload is marked nightly: true; mark the nightly ones `nightly: true`, or select workloads with --workloads (or WORKLOADS) or --all")
	}
	return out, nil
}

func match(c Candidate, e string) bool {
	e = strings.TrimPrefix(e, "./")
	if e == c.Name || e == c.File {
		return true
	}
	stem := strings.TrimSuffix(path.Base(c.File), path.Ext(c.File))
	if c.File != "" && e == stem {
		return true
	}
	// perf-eval paths: workloads/<stem>.yaml
	if strings.TrimSuffix(strings.TrimSuffix(e, ".yaml"), ".cue") == strings.TrimSuffix(c.File, ".cue") {
		return true
	}
	return false
}

// Closest returns up to n workload names nearest to e by edit distance.
// A path or file name is compared by its stem (workloads/x.cue -> x), and
// names much farther than the best match are left out, so a one-letter
// typo suggests only the workload it misspells.
func Closest(cands []Candidate, e string, n int) []string {
	type scored struct {
		name string
		d    int
	}
	key := strings.ToLower(entryStem(e))
	var s []scored
	for _, c := range cands {
		name := strings.ToLower(c.Name)
		d := suggest.Distance(key, name)
		if d <= len(c.Name)/2+2 || strings.Contains(name, key) {
			s = append(s, scored{c.Name, d})
		}
	}
	sort.Slice(s, func(i, j int) bool {
		if s[i].d != s[j].d {
			return s[i].d < s[j].d
		}
		return s[i].name < s[j].name
	})
	var out []string
	for i := 0; i < len(s) && len(out) < n; i++ {
		if s[i].d > s[0].d+2 && !strings.Contains(strings.ToLower(s[i].name), key) {
			continue
		}
		out = append(out, s[i].name)
	}
	return out
}

// entryStem is the workload-name part of a selection entry: the file name
// without directory and .cue/.yaml/.yml extension.
func entryStem(e string) string {
	b := path.Base(strings.ReplaceAll(e, "\\", "/"))
	for _, ext := range []string{".cue", ".yaml", ".yml"} {
		b = strings.TrimSuffix(b, ext)
	}
	return b
}
