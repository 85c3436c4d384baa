package plandiff

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/wlcdev/wlc/internal/plan"
)

// ProvenanceFile is the file a finished job leaves in its results
// directory saying which job it was and how long it ran. ReadRuns reads
// these fields of it and ignores any other:
//
//	job_hash      string, required: the job's plan.JobHash (WLC_JOB_HASH)
//	wall_seconds  number > 0, required: the job's wall-clock seconds, from
//	              its start to its last step's end (what it held the GPUs)
//	finished_at   string, RFC 3339, optional: when it finished; of several
//	              runs of one hash the latest counts (without it, the file
//	              whose path sorts last)
const ProvenanceFile = "provenance.json"

// Run is a job's last recorded run.
type Run struct {
	Hash       string
	WallS      float64
	FinishedAt time.Time
	// File is the provenance file, under the results directory.
	File string
}

type provenance struct {
	JobHash    *string  `json:"job_hash"`
	WallS      *float64 `json:"wall_seconds"`
	FinishedAt *string  `json:"finished_at"`
}

// ReadRuns finds every ProvenanceFile under fsys and keeps each hash's
// last run. root names fsys in errors; every unreadable file is one
// error (file:line:col where the JSON breaks).
func ReadRuns(fsys fs.FS, root string) (map[string]Run, []error) {
	runs := map[string]Run{}
	var errs []error
	walkErr := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %v", path.Join(root, p), err))
			return nil
		}
		if d.IsDir() || d.Name() != ProvenanceFile {
			return nil
		}
		name := path.Join(root, p)
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %v", name, err))
			return nil
		}
		r, err := parseProvenance(name, data)
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		r.File = name
		if last, ok := runs[r.Hash]; !ok || later(r, last) {
			runs[r.Hash] = r
		}
		return nil
	})
	if walkErr != nil {
		errs = append(errs, fmt.Errorf("%s: %v", root, walkErr))
	}
	return runs, errs
}

func later(a, b Run) bool {
	if !a.FinishedAt.Equal(b.FinishedAt) {
		return a.FinishedAt.After(b.FinishedAt)
	}
	return a.File > b.File
}

func parseProvenance(name string, data []byte) (Run, error) {
	var p provenance
	if err := json.Unmarshal(data, &p); err != nil {
		line, col := 1, 1
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			line, col = position(data, se.Offset)
		case errors.As(err, &te):
			line, col = position(data, te.Offset)
			err = fmt.Errorf("%s is a JSON %s", te.Field, te.Value)
		}
		return Run{}, fmt.Errorf("%s:%d:%d: not a provenance record: %v; it must be a JSON object with job_hash (a string) and wall_seconds (a number of seconds)", name, line, col, err)
	}
	var problems []string
	if p.JobHash == nil || strings.TrimSpace(*p.JobHash) == "" {
		problems = append(problems, "job_hash is missing (the job's WLC_JOB_HASH, e.g. \"v1-3f2a9c0d1e2b\")")
	}
	if p.WallS == nil || !(*p.WallS > 0) || math.IsInf(*p.WallS, 0) {
		problems = append(problems, "wall_seconds is missing or not a positive number of seconds")
	}
	var at time.Time
	if p.FinishedAt != nil {
		t, err := time.Parse(time.RFC3339, *p.FinishedAt)
		if err != nil {
			problems = append(problems, fmt.Sprintf("finished_at %q is not an RFC 3339 time (2026-12-06T10:00:00Z)", *p.FinishedAt))
		}
		at = t
	}
	if len(problems) > 0 {
		return Run{}, fmt.Errorf("%s:1:1: %s", name, strings.Join(problems, "; "))
	}
	return Run{Hash: *p.JobHash, WallS: *p.WallS, FinishedAt: at}, nil
}

// position is the 1-based line and column of byte offset off (the byte
// the decoder stopped after).
func position(data []byte, off int64) (int, int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off > 0 {
		off-- // the offending byte
	}
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// Basis says where a duration came from.
const (
	Measured  = "measured"
	Estimated = "estimated"
)

// Figure is one job's GPU-hours on one side.
type Figure struct {
	// GPUs are the GPUs the job reserves (nodes × GPUs per node, idle
	// ones included: they are held all the same).
	GPUs     int     `json:"gpus"`
	Hours    float64 `json:"hours"`
	GPUHours float64 `json:"gpu_hours"`
	// Basis is measured (the last recorded run of the same hash) or
	// estimated (the job's declared time budget, an upper bound).
	Basis string `json:"basis"`
	// From says which run or which budget.
	From string `json:"from"`
}

// Cost is a job's GPU-hours before and after (nil where the side lacks
// the job).
type Cost struct {
	Old *Figure `json:"old,omitempty"`
	New *Figure `json:"new,omitempty"`
}

// Total is GPU-hours on each side and the difference: the selection's,
// or one profile's share of it.
type Total struct {
	Old      float64 `json:"old"`
	New      float64 `json:"new"`
	Delta    float64 `json:"delta"`
	OldBasis string  `json:"old_basis"`
	NewBasis string  `json:"new_basis"`
	// DeltaBasis is measured only when every figure on both sides is.
	DeltaBasis string `json:"delta_basis"`
	// ByProfile splits the selection's total by the profile (the fleet)
	// each side runs a job on, in name order: a change can leave the total
	// as it was and still move GPU-hours from one fleet to another.
	ByProfile []ProfileTotal `json:"by_profile,omitempty"`
}

// ProfileTotal is one profile's share of the selection's GPU-hours.
type ProfileTotal struct {
	Profile string `json:"profile"`
	Total
}

// Moved are the profiles whose GPU-hours the change moves.
func (t *Total) Moved() []ProfileTotal {
	var out []ProfileTotal
	for _, p := range t.ByProfile {
		if p.Delta != 0 {
			out = append(out, p)
		}
	}
	return out
}

// Budget is a job's declared time limit in seconds and what declares it
// (e.g. "timeout_in_minutes 120"); the caller knows the backends' limits.
type Budget func(plan.Workload) (seconds int, from string)

// Price sets every entry's Cost and the report's GPUHours: a job's
// duration is its hash's last run in runs where there is one (measured),
// else its budget (estimated). Each side's figure counts toward the
// profile that side runs the job on.
func (r *Report) Price(runs map[string]Run, budget Budget) {
	var all tally
	byProfile := map[string]*tally{}
	share := func(profile string) *tally {
		t := byProfile[profile]
		if t == nil {
			t = &tally{}
			byProfile[profile] = t
		}
		return t
	}
	for i := range r.Entries {
		e := &r.Entries[i]
		c := &Cost{}
		if p, ok := e.OldPlan(); ok {
			c.Old = figure(p, e.OldHash, runs, budget)
			all.addOld(c.Old)
			share(p.Profile.Name).addOld(c.Old)
		}
		if p, ok := e.NewPlan(); ok {
			c.New = figure(p, e.NewHash, runs, budget)
			all.addNew(c.New)
			share(p.Profile.Name).addNew(c.New)
		}
		e.Cost = c
	}
	t := all.total()
	for _, name := range slices.Sorted(maps.Keys(byProfile)) {
		t.ByProfile = append(t.ByProfile, ProfileTotal{Profile: name, Total: byProfile[name].total()})
	}
	r.GPUHours = &t
}

// tally sums figures on each side.
type tally struct {
	old, new   float64
	oldB, newB basisCount
}

func (t *tally) addOld(f *Figure) { t.old += f.GPUHours; t.oldB.add(f.Basis) }
func (t *tally) addNew(f *Figure) { t.new += f.GPUHours; t.newB.add(f.Basis) }

func (t *tally) total() Total {
	before, after := round(t.old), round(t.new)
	both := basisCount{measured: t.oldB.measured + t.newB.measured, estimated: t.oldB.estimated + t.newB.estimated}
	return Total{Old: before, New: after, Delta: round(after - before), OldBasis: t.oldB.String(), NewBasis: t.newB.String(), DeltaBasis: both.String()}
}

func figure(p plan.Workload, hash string, runs map[string]Run, budget Budget) *Figure {
	f := &Figure{GPUs: p.Nodes * p.GPUsPerNode}
	if run, ok := runs[hash]; ok {
		f.Hours, f.Basis = run.WallS/3600, Measured
		f.From = run.File
		if !run.FinishedAt.IsZero() {
			f.From += ", finished " + run.FinishedAt.UTC().Format(time.RFC3339)
		}
	} else {
		s, from := budget(p)
		f.Hours, f.Basis, f.From = float64(s)/3600, Estimated, from
	}
	f.GPUHours = round(float64(f.GPUs) * f.Hours)
	f.Hours = round(f.Hours)
	return f
}

// round keeps two decimals: figures print the same on every machine.
func round(x float64) float64 { return math.Round(x*100) / 100 }

type basisCount struct{ measured, estimated int }

func (b *basisCount) add(basis string) {
	if basis == Measured {
		b.measured++
	} else {
		b.estimated++
	}
}

func (b basisCount) String() string {
	switch {
	case b.estimated == 0 && b.measured == 0:
		return "none"
	case b.estimated == 0:
		return Measured
	case b.measured == 0:
		return Estimated
	}
	return fmt.Sprintf("%d measured, %d estimated", b.measured, b.estimated)
}
