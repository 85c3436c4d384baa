package plan

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// A job's identity is a hash of what it runs, so a results folder, a
// dashboard row or the previous run of a job can be matched to the exact
// job that made it, whatever the workload is called and however its CUE
// is written.
//
// The hash is sha256 over IdentityHeader and the canonical JSON of the
// resolved plan (Workload's JSON form: every argv, the image, env and
// secrets, topology, profile and hardware facts, steps, tools, datasets,
// the layout of files under the results directory) with the labels that
// do not change what runs removed (identityLabels). Canonical: object keys
// sorted, no insignificant space, numbers as the plan writes them. CUE
// formatting, comments, field order, file names and which file defines a
// workload never reach the plan, so they never reach the hash.
//
// Changing what the encoding covers changes every hash: bump
// IdentityVersion (and with it the header and the printed prefix), so a
// hash of one version is never compared with another's as if equal.
const IdentityVersion = 1

// IdentityHeader starts the hashed bytes (a line of its own).
var IdentityHeader = fmt.Sprintf("wlc-job/v%d\n", IdentityVersion)

// hashPrefix starts every printed hash: the encoding's version.
var hashPrefix = fmt.Sprintf("v%d-", IdentityVersion)

// ShortHashLen is how many hex digits of the sha256 a printed hash keeps
// (48 bits: a collision among a package's jobs is out of reach).
const ShortHashLen = 12

// identityLabels are the plan's fields that name or describe a job
// without changing what it runs; a key under a path (profile.name) is
// removed from that object only.
var identityLabels = [][]string{
	{"name"},        // renaming a workload keeps its identity
	{"run_name"},    // dashboard_name, else the name
	{"description"}, // prose
	{"file"},        // which file defines the workload
	{"results_dir"}, // results/<run name>: the name again; the layout under it stays
	{"nightly"},     // whether the nightly build selects the job, not what it runs
	{"recipe"},      // where the server's argv came from; the argv itself stays
	{"profile", "name"},
}

// IdentityJSON is the canonical encoding of w that JobHash hashes (without
// IdentityHeader): for tests, and for seeing why two hashes differ.
func IdentityJSON(w Workload) ([]byte, error) {
	raw, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("workload %s: encoding its plan for the job hash: %w", w.Name, err)
	}
	var v map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // numbers keep the plan's spelling, not a float's
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("workload %s: decoding its plan for the job hash: %w", w.Name, err)
	}
	for _, path := range identityLabels {
		obj := v
		for _, k := range path[:len(path)-1] {
			obj, _ = obj[k].(map[string]any)
		}
		delete(obj, path[len(path)-1])
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // "<" in a shell script stays "<"
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("workload %s: encoding its plan for the job hash: %w", w.Name, err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// JobHash is w's identity as wlc prints it: the version prefix and the
// first ShortHashLen hex digits of the sha256, e.g. v1-3f2a9c0d1e2b.
func JobHash(w Workload) (string, error) {
	full, err := FullJobHash(w)
	if err != nil {
		return "", err
	}
	return hashPrefix + full[:ShortHashLen], nil
}

// FullJobHash is the whole sha256 (hex) of IdentityHeader and w's
// IdentityJSON.
func FullJobHash(w Workload) (string, error) {
	data, err := IdentityJSON(w)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write([]byte(IdentityHeader))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil)), nil
}
