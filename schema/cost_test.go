package schema_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// TestEvaluationCost keeps the schema's cost per workload where issue 14
// brought it, measured with CUE's own evaluation counters (deterministic,
// unlike timings): plain `cue vet -c` of the bundled package with its
// workloads copied n and 2n times, the difference per workload. A rule
// written with a plain label under _check (two unifications a rule in
// every workload, see #Workload's _check), a block given a further
// conjunct (no longer shared while absent), a catalog entry copied into
// each workload: each costs tens of unifications here.
func TestEvaluationCost(t *testing.T) {
	repo := testenv.RepoRoot(t)
	cue := pinnedCUE(t, repo)
	// Today: 144 unifications and 73 disjuncts a bundled workload on
	// average, 91 and 16 a minimal one (108 and 55 before the defaulted
	// fields' types were shared, see #WorkloadTypes); the bounds leave ~15%.
	for _, c := range []struct {
		name             string
		files            func(t *testing.T, copies int) map[string]string
		maxUnif, maxDisj float64
	}{
		{"minimal workload", minimalWorkloads, 105, 19},
		{"bundled workload", bundledWorkloads(repo), 166, 84},
	} {
		t.Run(c.name, func(t *testing.T) {
			const n = 4
			a, perA := vetStats(t, cue, repo, c.files(t, n))
			b, perB := vetStats(t, cue, repo, c.files(t, 2*n))
			count := float64(perB - perA)
			unif := float64(b.Unifications-a.Unifications) / count
			disj := float64(b.Disjuncts-a.Disjuncts) / count
			t.Logf("%s: %.1f unifications, %.1f disjuncts (cue vet of %d and %d workloads)", c.name, unif, disj, perA, perB)
			if unif > c.maxUnif {
				t.Errorf("a %s costs %.1f unifications, more than %.0f: a rule with a plain label under _check, a block no longer one reference, a value copied into each workload? (see docs/schema.md: Changing the schema)", c.name, unif, c.maxUnif)
			}
			if disj > c.maxDisj {
				t.Errorf("a %s costs %.1f disjuncts, more than %.0f: a new default or error() disjunction evaluated in every workload, not one reference to its type (see #WorkloadTypes)?", c.name, disj, c.maxDisj)
			}
		})
	}
}

// pinnedCUE is the cue command of the version go.mod pins: the counters
// are the evaluator's own and change with it.
func pinnedCUE(t *testing.T, repo string) string {
	cue := testenv.LookPath(t, "cue")
	gomod, err := os.ReadFile(filepath.Join(repo, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*cuelang\.org/go (v\S+)`).FindSubmatch(gomod)
	if m == nil {
		t.Fatal("go.mod requires no cuelang.org/go")
	}
	want := string(m[1])
	out, err := exec.Command(cue, "version").Output()
	if err != nil {
		t.Fatalf("cue version: %v", err)
	}
	if !strings.Contains(string(out), "cue version "+want+"\n") {
		testenv.Missing(t, fmt.Sprintf("cue on PATH is not the pinned %s (go install cuelang.org/go/cmd/cue@%s):\n%s", want, want, out))
	}
	return cue
}

type cueCounts struct {
	Unifications int64
	Disjuncts    int64
}

// vetStats runs `cue vet -c ./workloads` in a module holding the schema,
// the bundled package's shared files and files, and returns CUE's counters
// and the number of workloads.
func vetStats(t *testing.T, cue, repo string, files map[string]string) (cueCounts, int) {
	t.Helper()
	root := t.TempDir()
	testenv.CopyFile(t, filepath.Join(repo, "cue.mod", "module.cue"), filepath.Join(root, "cue.mod", "module.cue"))
	schemaFiles, err := filepath.Glob(filepath.Join(repo, "schema", "*.cue"))
	if err != nil || len(schemaFiles) == 0 {
		t.Fatalf("no schema files: %v", err)
	}
	for _, f := range schemaFiles {
		testenv.CopyFile(t, f, filepath.Join(root, "schema", filepath.Base(f)))
	}
	for _, f := range []string{"wlc.cue", "profiles.cue", "settings.cue"} {
		testenv.CopyFile(t, filepath.Join(repo, "workloads", f), filepath.Join(root, "workloads", f))
	}
	workloads := 0
	key := regexp.MustCompile(`(?m)^workloads: `)
	for name, text := range files {
		workloads += len(key.FindAllString(text, -1))
		if err := os.WriteFile(filepath.Join(root, "workloads", name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stats := filepath.Join(t.TempDir(), "stats.json")
	cmd := exec.Command(cue, "vet", "-c", "./workloads")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CUE_STATS_FILE="+stats)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cue vet -c ./workloads: %v\n%s", err, out)
	}
	data, err := os.ReadFile(stats)
	if err != nil {
		t.Fatalf("cue wrote no stats: %v", err)
	}
	var s struct{ CUE cueCounts }
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("%s: %v", stats, err)
	}
	if s.CUE.Unifications == 0 {
		t.Fatalf("cue counted no unifications:\n%s", data)
	}
	return s.CUE, workloads
}

// minimalWorkloads are n workloads giving only the required fields.
func minimalWorkloads(t *testing.T, n int) map[string]string {
	var b strings.Builder
	b.WriteString("package workloads\n\n")
	for i := range n {
		fmt.Fprintf(&b, "workloads: w%d: {profile: \"MI355X\", gpus_per_node: 8, model: \"org/model\", precision: \"bf16\", serve: tensor_parallel_size: 8}\n", i)
	}
	return map[string]string{"minimal.cue": b.String()}
}

// bundledWorkloads are the bundled workload files, copied under new keys.
func bundledWorkloads(repo string) func(t *testing.T, n int) map[string]string {
	key := regexp.MustCompile(`(?m)^workloads: ([A-Za-z0-9_.-]+):`)
	return func(t *testing.T, n int) map[string]string {
		files, err := filepath.Glob(filepath.Join(repo, "workloads", "*.cue"))
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, f := range files {
			switch filepath.Base(f) {
			case "wlc.cue", "profiles.cue", "settings.cue":
				continue
			}
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if !key.Match(data) {
				t.Fatalf("%s: no `workloads: <name>:` line to copy", f)
			}
			for i := range n {
				text := key.ReplaceAllString(string(data), fmt.Sprintf("workloads: ${1}_c%d:", i))
				out[fmt.Sprintf("c%d_%s", i, filepath.Base(f))] = text
			}
		}
		return out
	}
}
