package load_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/backends/docker"
	"github.com/wlcdev/wlc/backends/native"
	"github.com/wlcdev/wlc/backends/runner/runnertest"
	"github.com/wlcdev/wlc/internal/check"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/testrig/stub"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
	"github.com/wlcdev/wlc/schema"
)

// TestInjectionMatrixRuns executes what TestInjectionMatrix only parses:
// every case the matrix finds inert (no rule refused the payload, the
// artifacts kept their structure) runs under the stubs, on the backends
// whose jobs run here (native, docker), and must be inert in fact: the job
// ends as the unmodified one does, no payload executed (/tmp/wlc-pwned*),
// and every recorded argv and environment value that carried the field's
// value carries the payload verbatim, byte for byte, in the same place.
//
// To find where a field lands, each field first gets a unique marker (when
// the marker is itself inert there) and that marked base runs once; the
// places a marker shows up in the stubs' records are the places its
// payload must show up. Rounds then put the payloads at all fields at once
// (field i gets payload (i+k) mod P in round k), so every inert (field,
// payload) pair runs exactly once in P rounds; a round whose combination
// some rule refuses is split in halves.
//
// Fields holding the user's own code (custom step and custom job scripts
// and commands) are left out: running what they say is their purpose.
func TestInjectionMatrixRuns(t *testing.T) {
	for _, tool := range []string{"curl", "python3", "setsid"} {
		testenv.LookPath(t, tool)
	}
	b := loadLowerBase(t)
	fields := b.execFields(t)
	marks := map[int]string{}
	for fi, f := range fields {
		marks[fi] = f.marker
	}
	pairs := 0
	for _, f := range fields {
		pairs += len(f.payloads)
	}
	t.Logf("%d fields, %d inert (field, payload) pairs", len(fields), pairs)

	for _, be := range []backends.Backend{native.Backend{}, docker.Backend{}} {
		t.Run(be.Name(), func(t *testing.T) {
			t.Parallel()
			w, err := b.withValues(fields, marks, nil)
			if err != nil {
				t.Fatalf("the marked base: %v", err)
			}
			base := runRecorded(t, be, w)
			if base.code != 0 {
				t.Fatalf("the marked base exits %d:\n%s", base.code, base.output)
			}
			reached := 0
			for fi := range fields {
				if base.carries(fields[fi].marker) {
					reached++
				}
			}
			t.Logf("%s: %d of %d fields reach a recorded argv or environment", be.Name(), reached, len(fields))
			if reached < 8 {
				t.Errorf("only %d fields reach the stubs' records; the check would prove little", reached)
			}
			for k := range injectionPayloads {
				round := map[int]string{}
				for fi, f := range fields {
					pi := (fi + k) % len(injectionPayloads)
					if slices.Contains(f.payloads, pi) {
						round[fi] = injectionPayloads[pi]
					}
				}
				t.Run(fmt.Sprint("round", k), func(t *testing.T) {
					for _, rc := range b.roundCases(t, fields, round, nil) {
						checkRound(t, fields, base, runRecorded(t, be, rc.w), rc.values)
					}
				})
			}
		})
	}
}

var (
	execFieldsOnce sync.Once
	execFieldsVal  []execField
)

// execFields are the fields the runs put payloads at: each with a marker
// inert there and the payloads inert there. Fields holding the user's own
// code and tool choices are left out.
func (b *lowerBase) execFields(t *testing.T) []execField {
	t.Helper()
	execFieldsOnce.Do(func() {
		for i, s := range b.sites {
			if isUserCode(s) || isToolChoice(s.String()) {
				continue
			}
			marker := fmt.Sprintf("wlcmark%02dq", i)
			if o, err := b.runCase(s, marker); err != nil || o != inert {
				continue
			}
			f := execField{site: s, marker: marker}
			for pi, p := range injectionPayloads {
				if o, err := b.runCase(s, p); err == nil && o == inert {
					f.payloads = append(f.payloads, pi)
				}
			}
			if len(f.payloads) > 0 {
				execFieldsVal = append(execFieldsVal, f)
			}
		}
	})
	if len(execFieldsVal) < 15 {
		t.Fatalf("only %d fields with inert payloads to run; the base should reach the jobs with many", len(execFieldsVal))
	}
	return execFieldsVal
}

type execField struct {
	site     site
	marker   string
	payloads []int // indexes into injectionPayloads found inert here
}

func isUserCode(s site) bool {
	first, _ := s.path[0].(string)
	last, _ := s.path[len(s.path)-1].(string)
	if first == "custom_job" {
		return true
	}
	if first == "custom_steps" {
		return last == "script" || slices.Contains(s.path, any("command"))
	}
	return false
}

// isToolChoice reports whether the field names something the tool itself
// must know, so that any other value fails the job by design: a BFCL test
// category (the schema's list; bfcl refuses an unknown one).
func isToolChoice(s string) bool {
	return strings.HasPrefix(s, "bfcl.test_categories")
}

// roundCase is one job of a round: the payloads it carries (a field's
// index to its payload; fields not in it keep their marker) and the
// workload they make.
type roundCase struct {
	values map[int]string
	w      plan.Workload
}

// roundCases makes the workload of one combination of payloads; when some
// rule refuses the combination, each half is tried alone. fix adapts the
// base to where the job runs (nil: as it is).
func (b *lowerBase) roundCases(t *testing.T, fields []execField, values map[int]string, fix fixture) []roundCase {
	t.Helper()
	if len(values) == 0 {
		return nil
	}
	all := map[int]string{}
	for fi, f := range fields {
		all[fi] = f.marker
	}
	for fi, v := range values {
		all[fi] = v
	}
	w, err := b.withValues(fields, all, fix)
	if err == nil {
		return []roundCase{{values: values, w: w}}
	}
	if len(values) == 1 {
		for fi, v := range values {
			t.Errorf("%s = %q: inert alone, refused in the run: %v", fields[fi].site, short(v), err)
		}
		return nil
	}
	// Some rule refuses the combination: try each half alone.
	keys := slices.Sorted(maps.Keys(values))
	half := len(keys) / 2
	var out []roundCase
	for _, part := range [][]int{keys[:half], keys[half:]} {
		sub := map[int]string{}
		for _, fi := range part {
			sub[fi] = values[fi]
		}
		out = append(out, b.roundCases(t, fields, sub, fix)...)
	}
	return out
}

// checkRound compares the run of one combination of payloads (values)
// with the marked base's.
func checkRound(t *testing.T, fields []execField, base, got *recorded, values map[int]string) {
	t.Helper()
	if pwned, _ := filepath.Glob("/tmp/wlc-pwned*"); len(pwned) > 0 {
		t.Errorf("a payload executed (%v); payloads %s", pwned, describe(fields, values))
		for _, p := range pwned {
			os.Remove(p)
		}
	}
	if got.code != base.code {
		t.Errorf("exit %d, the marked base's %d; payloads %s:\n%s", got.code, base.code, describe(fields, values), failures(got.output))
		return
	}
	// Each process's argv, as a multiset (a renamed map key moves its
	// flag), and its environment must be the base's with every marker
	// replaced by its payload: verbatim, or JSON-escaped inside a JSON
	// argument.
	replace := func(s string, esc func(string) string) string {
		for fi, f := range fields {
			if v, ok := values[fi]; ok {
				s = strings.ReplaceAll(s, f.marker, esc(v))
			}
		}
		return s
	}
	// The job hash is of the whole plan, so a payload changes it: it is
	// compared as a hash, not byte for byte.
	same := func(got, base string) bool {
		got, base = jobHashRE.ReplaceAllString(got, "v1-<hash>"), jobHashRE.ReplaceAllString(base, "v1-<hash>")
		return got == replace(base, verbatim) || got == replace(base, jsonEscape)
	}
	for _, key := range slices.Sorted(maps.Keys(base.records)) {
		r0 := base.records[key]
		r, ok := got.records[key]
		if !ok {
			t.Errorf("%s: no such process in the run with payloads %s", key, describe(fields, values))
			continue
		}
		if len(r.argv) != len(r0.argv) {
			t.Errorf("%s: argv has %d words, the base's %d (a payload split or joined words); payloads %s\n got %s\nbase %s",
				key, len(r.argv), len(r0.argv), describe(fields, values), shortList(r.argv), shortList(r0.argv))
			continue
		}
		left := slices.Clone(r.argv)
		for _, a0 := range r0.argv {
			i := slices.IndexFunc(left, func(a string) bool { return same(a, a0) })
			if i < 0 {
				t.Errorf("%s: no argv word is %q verbatim (the base's %q); argv %s", key, short(replace(a0, verbatim)), short(a0), shortList(r.argv))
				continue
			}
			left = slices.Delete(left, i, i+1)
		}
		for name, v0 := range r0.env {
			// A variable's name may be a field too (env keys).
			got, ok := r.env[replace(name, verbatim)]
			if (hasMarker(v0, fields) || hasMarker(name, fields)) && (!ok || !same(got, v0)) {
				t.Errorf("%s: env %s = %q, want %q verbatim", key, name, short(got), short(replace(v0, verbatim)))
			}
		}
	}
}

func verbatim(s string) string { return s }

var jobHashRE = regexp.MustCompile(`\bv1-[0-9a-f]{12}\b`)

func shortList(l []string) string {
	var parts []string
	for _, s := range l {
		parts = append(parts, fmt.Sprintf("%q", short(s)))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// recorded is one job run: its exit and its stubs' distinct records,
// keyed by program, mode and the call's rank among those (the job runs its
// steps one after another).
type recorded struct {
	code    int
	output  string
	records map[string]record
	norm    func(string) string
	rank    map[string]int
	seen    map[string]bool
}

func newRecorded(code int, output string, norm func(string) string) *recorded {
	return &recorded{code: code, output: output, records: map[string]record{}, norm: norm, rank: map[string]int{}, seen: map[string]bool{}}
}

// add records one call, normalised.
func (out *recorded) add(program, mode string, argv []string, env map[string]string) {
	// A poll (docker inspect until the container is up) repeats one
	// call a number of times that depends on timing: count it once.
	id, _ := json.Marshal([]any{program, mode, argv, env})
	if out.seen[string(id)] {
		return
	}
	out.seen[string(id)] = true
	k := program + " " + mode
	key := fmt.Sprintf("%s #%d", k, out.rank[k])
	out.rank[k]++
	r := record{env: map[string]string{}}
	for _, a := range argv {
		r.argv = append(r.argv, out.norm(a))
	}
	for n, v := range env {
		r.env[n] = out.norm(v)
	}
	out.records[key] = r
}

type record struct {
	argv []string
	env  map[string]string
}

// runRecorded runs w's job under be and collects what the stubs recorded,
// with the run's own paths, ports and ids normalised away.
func runRecorded(t *testing.T, be backends.Backend, w plan.Workload) *recorded {
	t.Helper()
	j := runnertest.NewJob(t, be, w)
	res := j.Run(t, 6*time.Minute)
	out := newRecorded(res.Code, res.Output, normaliser(j))
	for _, r := range j.Records(t) {
		out.add(r.Program, r.Mode, r.Argv, r.Env)
	}
	if _, isDocker := be.(docker.Backend); isDocker {
		calls, err := stub.DockerCalls(j.DockerState)
		if err != nil {
			t.Fatalf("docker calls: %v", err)
		}
		for _, c := range calls {
			mode := ""
			if len(c.Argv) > 0 {
				mode = c.Argv[0]
			}
			out.add("docker", mode, c.Argv, nil)
		}
	}
	j.NoProcessLeft(t)
	return out
}

var portRE = regexp.MustCompile(`:[0-9]{2,5}\b|^[0-9]{4,5}$`)

func normaliser(j *runnertest.Job) func(string) string {
	jobID := ""
	for _, e := range j.Env {
		if v, ok := strings.CutPrefix(e, "BUILDKITE_JOB_ID="); ok {
			jobID = v
		}
	}
	return func(s string) string {
		s = strings.ReplaceAll(s, j.Dir, "$DIR")
		if jobID != "" {
			s = strings.ReplaceAll(s, jobID, "$JOB")
		}
		return portRE.ReplaceAllString(s, ":$PORT")
	}
}

func (r *recorded) carries(marker string) bool {
	for _, rec := range r.records {
		for _, a := range rec.argv {
			if strings.Contains(a, marker) {
				return true
			}
		}
		for _, v := range rec.env {
			if strings.Contains(v, marker) {
				return true
			}
		}
	}
	return false
}

func hasMarker(s string, fields []execField) bool {
	if !strings.Contains(s, "wlcmark") {
		return false
	}
	for _, f := range fields {
		if strings.Contains(s, f.marker) {
			return true
		}
	}
	return false
}

// fixture adapts the base's workload and profile (their JSON trees) to
// where its jobs run, before any value is set.
type fixture func(w, p map[string]any)

// withValues is the base workload, adapted by fix, with field i set to
// values[i], checked by vet's value rules and resolved as export resolves
// it.
func (b *lowerBase) withValues(fields []execField, values map[int]string, fix fixture) (plan.Workload, error) {
	var wTree, pTree any
	json.Unmarshal(b.wJSON, &wTree)
	json.Unmarshal(b.pJSON, &pTree)
	if fix != nil {
		fix(wTree.(map[string]any), pTree.(map[string]any))
	}
	// Values first, then key renames (a rename would move the paths of
	// the values under it).
	for _, keys := range []bool{false, true} {
		for _, fi := range slices.Sorted(maps.Keys(values)) {
			s := fields[fi].site
			if s.key != keys {
				continue
			}
			if s.profile {
				pTree = setJSON(pTree, s.path, s.key, values[fi])
			} else {
				wTree = setJSON(wTree, s.path, s.key, values[fi])
			}
		}
	}
	wData, _ := json.Marshal(wTree)
	pData, _ := json.Marshal(pTree)
	var w schema.Workload
	var prof schema.Profile
	if err := json.Unmarshal(wData, &w); err != nil {
		return plan.Workload{}, err
	}
	if err := json.Unmarshal(pData, &prof); err != nil {
		return plan.Workload{}, err
	}
	findings := append(check.WorkloadValues(&w), check.ProfileValues(&prof)...)
	if len(findings) > 0 {
		return plan.Workload{}, fmt.Errorf("vet: %v", findings)
	}
	lw := b.workload
	lw.Workload = w
	rr := *b.res
	rr.Profiles = map[string]schema.Profile{lw.Profile: prof}
	return rr.Resolve(lw, plan.Overrides{})
}

func describe(fields []execField, values map[int]string) string {
	var parts []string
	for _, fi := range slices.Sorted(maps.Keys(values)) {
		parts = append(parts, fmt.Sprintf("%s=%q", fields[fi].site, short(values[fi])))
	}
	return strings.Join(parts, ", ")
}

func jsonEscape(s string) string {
	data, _ := json.Marshal(s)
	return string(data[1 : len(data)-1])
}

func short(s string) string {
	if len(s) > 60 {
		return s[:60] + fmt.Sprintf("…(%d bytes)", len(s))
	}
	return s
}

// failures are the job output's lines that say what failed.
func failures(out string) string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "FAILED") || strings.Contains(l, "rror") || strings.Contains(l, "failed") {
			lines = append(lines, short(l))
		}
	}
	return strings.Join(lines, "\n")
}

// TestMain removes the stubs TestInjectionMatrixRuns builds.
func TestMain(m *testing.M) { os.Exit(runnertest.Main(m)) }
