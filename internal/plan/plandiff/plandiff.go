// Package plandiff compares two compilations of a workloads package (say,
// a pull request's base and its head) job by job: which jobs appear,
// disappear, are renamed or change, what exactly changes in what they run
// (as options, not as text), and what the change costs in GPU-hours.
//
// Jobs are matched by name, then by identity (plan.JobHash): a job that
// disappears under one name and appears under another with the same hash
// was renamed, nothing more.
package plandiff

import (
	"cmp"
	"maps"
	"slices"

	"github.com/wlcdev/wlc/internal/plan"
)

// Job is one resolved workload and its identity.
type Job struct {
	Plan plan.Workload
	Hash string
}

// NewJobs hashes plans.
func NewJobs(ps []plan.Workload) ([]Job, error) {
	out := make([]Job, len(ps))
	for i, p := range ps {
		h, err := plan.JobHash(p)
		if err != nil {
			return nil, err
		}
		out[i] = Job{Plan: p, Hash: h}
	}
	return out, nil
}

// Status is what became of a job between the two sides.
type Status string

const (
	Added     Status = "added"
	Removed   Status = "removed"
	Renamed   Status = "renamed"
	Changed   Status = "changed"
	Unchanged Status = "unchanged"
)

// Entry is one job's fate.
type Entry struct {
	// Name is the job's name on the new side (the old side's for a
	// removed job); OldName is set for a renamed job.
	Name    string `json:"name"`
	OldName string `json:"old_name,omitempty"`
	Status  Status `json:"status"`
	OldHash string `json:"old_hash,omitempty"`
	NewHash string `json:"new_hash,omitempty"`
	// Profile is the job's profile (the new side's when both have it).
	Profile string `json:"profile"`
	// Changes say what a changed job runs differently, area by area.
	Changes []Change `json:"changes,omitempty"`
	// Artifacts are the backend files the job's change touches (set by
	// the caller, who can lower plans: see Report.SetArtifacts).
	Artifacts []Artifact `json:"artifacts,omitempty"`
	// Cost is the job's GPU-hours on each side (see Report.Price).
	Cost *Cost `json:"gpu_hours,omitempty"`

	old, new *Job
}

// Report is the comparison of two sides.
type Report struct {
	// Old and New name the sides for people (a revision, a directory).
	Old string `json:"old"`
	New string `json:"new"`
	// Entries are sorted by name; Unchanged ones are kept (the JSON
	// and the GPU-hours count them) and summarised in text.
	Entries []Entry `json:"jobs"`
	// GPUHours totals the selection's cost on each side (Price sets it).
	GPUHours *Total `json:"gpu_hours,omitempty"`
}

// Compare matches old and new jobs and says what changed.
func Compare(oldName, newName string, old, new []Job) *Report {
	r := &Report{Old: oldName, New: newName}
	oldBy := map[string]*Job{}
	for i := range old {
		oldBy[old[i].Plan.Name] = &old[i]
	}
	newBy := map[string]*Job{}
	for i := range new {
		newBy[new[i].Plan.Name] = &new[i]
	}
	var added, removed []*Job
	for i := range new {
		n := &new[i]
		o, ok := oldBy[n.Plan.Name]
		if !ok {
			added = append(added, n)
			continue
		}
		e := Entry{Name: n.Plan.Name, OldHash: o.Hash, NewHash: n.Hash, Profile: n.Plan.Profile.Name, old: o, new: n}
		if o.Hash == n.Hash {
			e.Status = Unchanged
		} else {
			e.Status = Changed
			e.Changes = Changes(o.Plan, n.Plan)
		}
		r.Entries = append(r.Entries, e)
	}
	for i := range old {
		if _, ok := newBy[old[i].Plan.Name]; !ok {
			removed = append(removed, &old[i])
		}
	}
	// A removed job whose hash an added one has was renamed; several
	// with one hash pair up in name order (both lists are).
	byName := func(a, b *Job) int { return cmp.Compare(a.Plan.Name, b.Plan.Name) }
	slices.SortFunc(added, byName)
	slices.SortFunc(removed, byName)
	for _, n := range added {
		i := slices.IndexFunc(removed, func(o *Job) bool { return o != nil && o.Hash == n.Hash })
		if i < 0 {
			r.Entries = append(r.Entries, Entry{Name: n.Plan.Name, Status: Added, NewHash: n.Hash, Profile: n.Plan.Profile.Name, new: n})
			continue
		}
		o := removed[i]
		removed[i] = nil
		r.Entries = append(r.Entries, Entry{Name: n.Plan.Name, OldName: o.Plan.Name, Status: Renamed, OldHash: o.Hash, NewHash: n.Hash, Profile: n.Plan.Profile.Name, old: o, new: n})
	}
	for _, o := range removed {
		if o != nil {
			r.Entries = append(r.Entries, Entry{Name: o.Plan.Name, Status: Removed, OldHash: o.Hash, Profile: o.Plan.Profile.Name, old: o})
		}
	}
	slices.SortFunc(r.Entries, func(a, b Entry) int { return cmp.Compare(a.Name, b.Name) })
	return r
}

// Count is how many entries have status s.
func (r *Report) Count(s Status) int {
	n := 0
	for _, e := range r.Entries {
		if e.Status == s {
			n++
		}
	}
	return n
}

// Touched are the new side's jobs whose identity is new: added or
// changed (a renamed job runs what ran before, under another name).
func (r *Report) Touched() []string {
	var out []string
	for _, e := range r.Entries {
		if e.Status == Added || e.Status == Changed {
			out = append(out, e.Name)
		}
	}
	return out
}

// OldPlan and NewPlan are the entry's plans, when its side has the job.
func (e *Entry) OldPlan() (plan.Workload, bool) {
	if e.old == nil {
		return plan.Workload{}, false
	}
	return e.old.Plan, true
}

func (e *Entry) NewPlan() (plan.Workload, bool) {
	if e.new == nil {
		return plan.Workload{}, false
	}
	return e.new.Plan, true
}

// Artifact is one backend file a job's change touches.
type Artifact struct {
	Backend string `json:"backend"`
	Path    string `json:"path"`
	// Change is added, removed or changed.
	Change string `json:"change"`
}

// SetArtifacts records, for every job that is not unchanged, the backend
// files whose content differs between the sides. lower returns a job's
// files by {backend, path}, from the backends that can run it.
func (r *Report) SetArtifacts(lower func(plan.Workload) map[[2]string][]byte) {
	for i := range r.Entries {
		e := &r.Entries[i]
		if e.Status == Unchanged {
			continue
		}
		var oldF, newF map[[2]string][]byte
		if p, ok := e.OldPlan(); ok {
			oldF = lower(p)
		}
		if p, ok := e.NewPlan(); ok {
			newF = lower(p)
		}
		keys := map[[2]string]bool{}
		for k := range oldF {
			keys[k] = true
		}
		for k := range newF {
			keys[k] = true
		}
		for _, k := range slices.SortedFunc(maps.Keys(keys), func(a, b [2]string) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) }) {
			o, inOld := oldF[k]
			n, inNew := newF[k]
			change := ""
			switch {
			case !inOld:
				change = "added"
			case !inNew:
				change = "removed"
			case string(o) != string(n):
				change = "changed"
			default:
				continue
			}
			e.Artifacts = append(e.Artifacts, Artifact{Backend: k[0], Path: k[1], Change: change})
		}
	}
}
