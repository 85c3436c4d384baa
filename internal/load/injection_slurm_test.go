package load_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/backends/runner/runnertest"
	"github.com/wlcdev/wlc/backends/slurm"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/testrig/slurmtest"
	"github.com/wlcdev/wlc/internal/testrig/stub"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// TestInjectionMatrixRunsSlurm is TestInjectionMatrixRuns on the Slurm
// backend: the same fields, markers and rounds, each round one sbatch job
// on the local cluster (internal/testrig/slurmtest) with the stubs first on PATH.
// Rounds alternate between two shapes, each with its own marked base: one
// node, and two nodes (rank 1 --headless); both in Pyxis containers
// (fakepyxis exports what srun got as WLC_FAKEPYXIS_*, which the stubs
// record), the first with the submission directory mounted at its own path,
// the second with the profile's workdir. Besides the stubs' argv and
// environment, the job as slurmctld read it from the #SBATCH lines (name,
// partition, account, nodes, GPUs, time, output files, ...) must be the
// base's with each marker replaced by its payload: a payload that broke a
// directive, or added one, shows there.
//
// The base is adapted to the cluster in its fixture: partition, one GPU per
// node, no reservation, a short time limit. The fields the fixture sets name
// the cluster's own resources and are left out: another value fails the
// submission by design. At most four jobs are queued or running at once, so
// other packages' cluster tests (whose jobs take whole nodes) wait for a
// few short jobs at most.
func TestInjectionMatrixRunsSlurm(t *testing.T) {
	c := slurmtest.Require(t)
	for _, tool := range []string{"curl", "python3"} {
		testenv.LookPath(t, tool)
	}
	b := loadLowerBase(t)
	bin := runnertest.Stubs(t)
	var fields []execField
	for _, f := range b.execFields(t) {
		if !slurmOwned(f.site) {
			fields = append(fields, f)
		}
	}
	marks := map[int]string{}
	for fi, f := range fields {
		marks[fi] = f.marker
	}
	jobs := make(chan struct{}, 4)
	begin := time.Now()
	t.Cleanup(func() {
		t.Logf("%d rounds on the cluster in %v", len(injectionPayloads), time.Since(begin).Round(time.Second))
	})
	shapes := []struct {
		name  string
		nodes int
	}{{"1node", 1}, {"2node", 2}}
	// Subtests run in goroutines rather than as parallel tests: the jobs
	// wait on the cluster, not on this machine's CPUs, and -parallel
	// (GOMAXPROCS) would let only two of them queue at once.
	var shapesDone sync.WaitGroup
	for si, shape := range shapes {
		shapesDone.Go(func() {
			t.Run(shape.name, func(t *testing.T) {
				fix := slurmFixture(shape.nodes)
				w, err := b.withValues(fields, marks, fix)
				if err != nil {
					t.Fatalf("the marked base: %v", err)
				}
				base := runSlurm(t, c, bin, jobs, w)
				if base.code != 0 {
					t.Fatalf("the marked base exits %d:\n%s", base.code, base.output)
				}
				reached := 0
				for _, f := range fields {
					if base.carries(f.marker) {
						reached++
					}
				}
				t.Logf("%s: %d of %d fields reach a recorded argv, environment or job field", shape.name, reached, len(fields))
				if reached < 8 {
					t.Errorf("only %d fields reach the records; the check would prove little", reached)
				}
				var rounds sync.WaitGroup
				for k := si; k < len(injectionPayloads); k += len(shapes) {
					round := map[int]string{}
					for fi, f := range fields {
						pi := (fi + k) % len(injectionPayloads)
						if slices.Contains(f.payloads, pi) {
							round[fi] = injectionPayloads[pi]
						}
					}
					cases := b.roundCases(t, fields, round, fix)
					rounds.Go(func() {
						t.Run(fmt.Sprint("round", k), func(t *testing.T) {
							for _, rc := range cases {
								checkRound(t, fields, base, runSlurm(t, c, bin, jobs, rc.w), rc.values)
							}
						})
					})
				}
				rounds.Wait()
			})
		})
	}
	shapesDone.Wait()
}

// slurmFixture adapts the base to the local cluster: nodes × one GPU, the
// server spread over them, partition debug, no reservation, 10 minutes; on
// one node Pyxis mounts the submission directory at its own path (no
// workdir).
func slurmFixture(nodes int) fixture {
	return func(w, p map[string]any) {
		w["nodes"] = nodes
		w["gpus_per_node"] = 1
		w["serve"].(map[string]any)["tensor_parallel_size"] = nodes
		s := p["slurm"].(map[string]any)
		s["partition"] = "debug"
		s["gres"] = "gpu:1"
		s["time_limit"] = "10:00"
		s["max_nodes"] = 2
		delete(s, "reservation")
		if nodes == 1 {
			delete(s["pyxis"].(map[string]any), "workdir")
		}
	}
}

// slurmOwned reports whether the fixture sets s.
func slurmOwned(s site) bool {
	if !s.profile || len(s.path) < 2 || s.path[0] != "slurm" {
		return false
	}
	switch s.path[1] {
	case "partition", "gres", "time_limit", "reservation":
		return true
	}
	return s.String() == "profile:slurm.pyxis.workdir"
}

// jobFields are the fields of `scontrol show job` the #SBATCH lines set.
var jobFields = []string{"JobName", "Partition", "Account", "QOS", "Reservation", "NumNodes", "NumTasks", "TRES",
	"TresPerNode", "TimeLimit", "OverSubscribe", "Requeue", "StdOut", "StdErr", "Comment", "Contiguous", "Features"}

// runSlurm runs w's sbatch script as a job on c (holding one of jobs'
// slots while it queues and runs) and collects what the stubs recorded,
// keyed by the node they ran on (its index in the job's node list), plus
// the job's fields as slurmctld read them ("sbatch job").
func runSlurm(t *testing.T, c *slurmtest.Cluster, bin string, jobs chan struct{}, w plan.Workload) *recorded {
	t.Helper()
	arts, err := slurm.New().Lower([]plan.Workload{w}, backends.Options{})
	if err != nil || len(arts) != 1 {
		t.Fatalf("lowering %s: %v (%d artifacts)", w.Name, err, len(arts))
	}
	dir := t.TempDir()
	script := filepath.Join(dir, arts[0].Path)
	if err := os.WriteFile(script, arts[0].Data, 0o755); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, filepath.FromSlash(w.ResultsPath))
	if err := os.MkdirAll(results, 0o755); err != nil {
		t.Fatal(err)
	}
	records := filepath.Join(dir, "stub-log")
	env := runnertest.ClientEnv(bin, dir)
	for i, e := range env {
		if strings.HasPrefix(e, "PYTHONPATH=") {
			// An image that ships the client tools: installing them
			// (a step and ~10 s per job) is covered by the other runs.
			env[i] = "PYTHONPATH=" + stub.Python(bin, filepath.Join(dir, "pip-site"), "lm-eval", "bfcl-eval", "soundfile")
		}
	}
	export := runnertest.SlurmExport(bin, records, "0.2", env...)
	var id, state, code string
	func() {
		jobs <- struct{}{}
		defer func() { <-jobs }()
		id = c.Sbatch(t, script, "--chdir="+dir, export)
		state, code = c.Wait(t, id, 8*time.Minute)
	}()

	var output strings.Builder
	logs, _ := filepath.Glob(filepath.Join(results, "*.log"))
	outs, _ := filepath.Glob(filepath.Join(results, "slurm-*"))
	for _, f := range append(outs, logs...) {
		data, _ := os.ReadFile(f)
		fmt.Fprintf(&output, "--- %s\n%s", filepath.Base(f), data)
	}
	exit, _, _ := strings.Cut(code, ":")
	n, err := strconv.Atoi(exit)
	if err != nil || (state != "COMPLETED" && n == 0) {
		n = -1
	}
	job := c.Job(t, id)
	hosts := hostnames(t, c, job["NodeList"])
	norm := slurmNormaliser(dir, id, c.Nodes)
	out := newRecorded(n, fmt.Sprintf("job %s %s exit %s\n%s", id, state, code, output.String()), norm)

	rs, err := stub.Records(records)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, r := range rs {
		node := slices.Index(hosts, r.Env["SLURMD_NODENAME"])
		out.add(r.Program, fmt.Sprintf("%s @node%d", r.Mode, node), r.Argv, r.Env)
	}
	var fields []string
	for _, k := range jobFields {
		if v, ok := job[k]; ok {
			fields = append(fields, k+"="+v)
		}
	}
	out.add("sbatch", "job", fields, nil)

	// The job is over; slurmstepd's last SIGKILLs may still be on the way.
	left := slurmtest.AfterKillGrace(func() (alive []string) {
		for _, r := range rs {
			if runnertest.Alive(r.PID) {
				alive = append(alive, fmt.Sprintf("%s %s (pid %d)", r.Program, r.Mode, r.PID))
			}
		}
		return alive
	})
	for _, a := range left {
		t.Errorf("%s still runs after job %s ended", a, id)
	}
	return out
}

// hostnames expands a Slurm node list ("n[1-2]") in the job's order.
func hostnames(t *testing.T, c *slurmtest.Cluster, list string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := c.Command(ctx, "scontrol", "show", "hostnames", list).Output()
	if err != nil {
		t.Fatalf("scontrol show hostnames %s: %v", list, err)
	}
	return strings.Fields(string(out))
}

// slurmNormaliser takes the run's own directory, job id, node names and
// ports out of a recorded value.
func slurmNormaliser(dir, jobID string, nodes []string) func(string) string {
	var alts []string
	for _, n := range nodes {
		alts = append(alts, regexp.QuoteMeta(n))
	}
	nodeRE := regexp.MustCompile(`\b(` + strings.Join(alts, "|") + `)\b`)
	jobRE := regexp.MustCompile(`\b` + jobID + `\b`)
	return func(s string) string {
		s = strings.ReplaceAll(s, dir, "$DIR")
		s = jobRE.ReplaceAllString(s, "$$JOB")
		s = nodeRE.ReplaceAllString(s, "$$NODE")
		return portRE.ReplaceAllString(s, ":$$PORT")
	}
}
