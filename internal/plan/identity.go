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
// The hash is sha256 over IdentityHeader and the plan's JSON form
// (Workload's: every argv, the image, env and secrets, topology, profile
// and hardware facts, steps, tools, datasets, the layout of files under
// the results directory), without the labels that do not change what
// runs (identityView). The encoding is encoding/json's: fields in the Go
// structs' order, map keys sorted, no insignificant space, no HTML
// escaping. CUE formatting, comments, field order, file names and which
// file defines a workload never reach the plan, so they never reach the
// hash.
//
// A change to the plan's JSON form changes hashes (a new field, a field
// moved in its struct): bump IdentityVersion with it (and with it the
// header and the printed prefix), so hashes of two encodings are never
// taken for the same job's.
const IdentityVersion = 1

// IdentityHeader starts the hashed bytes (a line of its own).
var IdentityHeader = fmt.Sprintf("wlc-job/v%d\n", IdentityVersion)

// hashPrefix starts every printed hash: the encoding's version.
var hashPrefix = fmt.Sprintf("v%d-", IdentityVersion)

// ShortHashLen is how many hex digits of the sha256 a printed hash keeps
// (48 bits: a collision among a package's jobs is out of reach).
const ShortHashLen = 12

// identityView is a plan without its labels: each field here shadows the
// plan's field of the same JSON name (encoding/json takes the shallower
// one) and, always empty, is omitted. The profile's name is blanked in
// place. Marshalling the plan once this way took 33 µs against 233 to
// 297 µs for removing the keys from a decoded copy (BenchmarkJobHash, 2
// shared cores), and export hashes every plan for its script and step.
type identityView struct {
	Workload
	Name        string        `json:"name,omitempty"`        // renaming a workload keeps its identity
	RunName     string        `json:"run_name,omitempty"`    // dashboard_name, else the name
	Description string        `json:"description,omitempty"` // prose
	File        string        `json:"file,omitempty"`        // which file defines the workload
	ResultsPath string        `json:"results_dir,omitempty"` // results/<run name>: the name again; the layout under it stays
	Nightly     bool          `json:"nightly,omitempty"`     // whether the nightly build selects the job, not what it runs
	Recipe      *RecipeOrigin `json:"recipe,omitempty"`      // where the server's argv came from; the argv itself stays
}

// IdentityJSON is the encoding JobHash hashes (without IdentityHeader):
// for tests, and for seeing why two hashes differ.
func IdentityJSON(w Workload) ([]byte, error) {
	v := identityView{Workload: w}
	v.Workload.Profile.Name = "" // a profile's facts count, not its name
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
