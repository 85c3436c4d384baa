package load_test

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// scalarLine is a field written with a scalar value on its own line.
var scalarLine = regexp.MustCompile(`^(\s*)([a-z_]+):(\s+)([^{\[\s].*)$`)

// internals are marks of a finding that speaks CUE rather than wlc, or of
// a cascade: a rule computing with a refused value ("error in call to
// rem"), a lookup keyed by one ("undefined field"), the schema's own names
// (_check, #OnEngine; #SBATCH has no lowercase letter), an unresolved
// default ("*1 | >=1 & int") or a value that ran away with the budget.
var internals = regexp.MustCompile(`error in call to|undefined field|_check|incomplete value|non-concrete|\*\d+ \||#[A-Z]\w*[a-z]\w*|memory budget|cycle`)

// TestMutatedScalars replaces each scalar of the backend goldens'
// workloads and profiles (vLLM, SGLang, disaggregated on Slurm, a custom
// job, sweeps) with a value of another kind, a refused number or null, one
// at a time: whatever vet finds is said at a file:line:col, in the user's
// terms. Each case found a bug once (a rem of 0, a repetition count that
// exhausted the memory budget, null taken for the wanted type, an engine's
// blocks reported as undefined fields).
func TestMutatedScalars(t *testing.T) {
	root := testenv.RepoRoot(t)
	archives := []string{"slurm/pd_two_node.txtar", "docker/sglang.txtar", "docker/custom_job.txtar", "docker/sweep.txtar"}
	values := []string{"0", `"x"`, "null", "99999999999"}
	for _, name := range archives {
		ar, err := txtar.ParseFile(filepath.Join(root, "testdata", "backends", name))
		if err != nil {
			t.Fatal(err)
		}
		files := map[string]string{}
		for _, f := range ar.Files {
			if strings.HasPrefix(f.Name, "workloads/") || strings.HasPrefix(f.Name, "cue.mod/") {
				files[f.Name] = string(f.Data)
			}
		}
		for target, src := range files {
			if !strings.HasSuffix(target, ".cue") || target == "workloads/wlc.cue" || strings.HasPrefix(target, "cue.mod/") {
				continue
			}
			lines := strings.Split(src, "\n")
			for i, l := range lines {
				m := scalarLine.FindStringSubmatch(l)
				if m == nil {
					continue
				}
				for _, v := range values {
					mutated := append([]string(nil), lines...)
					mutated[i] = m[1] + m[2] + ":" + m[3] + v
					t.Run(fmt.Sprintf("%s/%s:%d/%s=%s", name, filepath.Base(target), i+1, m[2], v), func(t *testing.T) {
						t.Parallel()
						pkg := map[string]string{}
						for k, d := range files {
							pkg[k] = d
						}
						pkg[target] = strings.Join(mutated, "\n")
						r := loadPkg(t, writePkg(t, pkg))
						for _, d := range r.Diags {
							if d.File == "" || d.Line < 1 || d.Column < 1 {
								t.Errorf("finding without file:line:col: %s", d)
							}
							if internals.MatchString(d.Message) {
								t.Errorf("finding in CUE's terms or a cascade: %s", d)
							}
						}
					})
				}
			}
		}
	}
}
