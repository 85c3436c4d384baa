package slurm_test

import (
	"strings"
	"testing"

	"github.com/wlcdev/wlc/backends"
	"github.com/wlcdev/wlc/backends/slurm"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
	"github.com/wlcdev/wlc/schema"
)

// twoNode is the two_node_pyxis archive's plan, for mutation.
func twoNode(t *testing.T) plan.Workload { return goldenPlan(t, "two_node_pyxis") }

// Values that cannot be written safely are refused at lowering time too
// (for plans that did not come through vet), and nothing is emitted.
func TestLowerRefusesUnsafeValues(t *testing.T) {
	testenv.RepoRoot(t)
	cases := []struct {
		name   string
		mutate func(w *plan.Workload)
		want   string
	}{
		{"partition newline", func(w *plan.Workload) { w.Profile.Slurm.Partition = "debug\n#SBATCH --wrap=id" }, "slurm.partition"},
		{"account space", func(w *plan.Workload) { w.Profile.Slurm.Account = "a --uid=0" }, "slurm.account"},
		{"qos quote", func(w *plan.Workload) { w.Profile.Slurm.QOS = `"x"` }, "slurm.qos"},
		{"reservation dollar", func(w *plan.Workload) { w.Profile.Slurm.Reservation = "$(id)" }, "slurm.reservation"},
		{"time", func(w *plan.Workload) { w.Profile.Slurm.TimeLimit = "10:00\n#SBATCH --uid=0" }, "slurm.time_limit"},
		{"gres", func(w *plan.Workload) { w.Profile.Slurm.Gres = "gpu:4 --x" }, "slurm.gres"},
		{"extra sbatch space", func(w *plan.Workload) { w.Profile.Slurm.ExtraSbatchArgs = []string{"--comment=a b"} }, "extra_sbatch_args[0]"},
		{"extra sbatch newline", func(w *plan.Workload) { w.Profile.Slurm.ExtraSbatchArgs = []string{"--comment=a\nrm -rf /"} }, "extra_sbatch_args[0]"},
		{"extra sbatch owned", func(w *plan.Workload) { w.Profile.Slurm.ExtraSbatchArgs = []string{"--output=/tmp/x"} }, "extra_sbatch_args[0]"},
		{"extra srun command", func(w *plan.Workload) { w.Profile.Slurm.ExtraSrunArgs = []string{"bash"} }, "extra_srun_args[0]"},
		{"extra srun owned", func(w *plan.Workload) { w.Profile.Slurm.ExtraSrunArgs = []string{"--container-image=evil"} }, "extra_srun_args[0]"},
		{"mpi", func(w *plan.Workload) { w.Profile.Slurm.MPI = "pmix --uid=0" }, "slurm.mpi"},
		{"account too long", func(w *plan.Workload) { w.Profile.Slurm.Account = strings.Repeat("a", 1025) }, "slurm.account"},
		{"mount space", func(w *plan.Workload) {
			w.Profile.Slurm.Pyxis.Mounts = []schema.Mount{{Source: "/data/hf", Target: "/root/hf cache"}}
		}, "pyxis.mounts[0].target"},
		{"mount comma", func(w *plan.Workload) {
			w.Profile.Slurm.Pyxis.Mounts = []schema.Mount{{Source: "/a,/etc", Target: "/b"}}
		}, "pyxis.mounts[0].source"},
		{"image space", func(w *plan.Workload) { w.Profile.Slurm.Pyxis.Image = "img --container-remap-root" }, "pyxis.image"},
		{"name", func(w *plan.Workload) { w.Name = "x\n#SBATCH --uid=0" }, "workload name"},
		{"env name", func(w *plan.Workload) { w.Env = append(w.Env, plan.EnvVar{Name: "A;id", Value: "1"}) }, "environment variable name"},
		// Slurm drops a longer name from the steps' environment.
		{"env name too long", func(w *plan.Workload) {
			w.Env = append(w.Env, plan.EnvVar{Name: strings.Repeat("N", 256), Value: "1"})
		}, "environment variable name"},
		{"gres vs gpus", func(w *plan.Workload) { w.Profile.Slurm.Gres = "gpu:2" }, "gpus_per_node"},
		{"max nodes", func(w *plan.Workload) { w.Profile.Slurm.MaxNodes = 1 }, "max_nodes"},
		{"nul in arg", func(w *plan.Workload) { w.Serve.Args = append(w.Serve.Args, "a\x00b") }, "cannot pass"},
		{"not slurm", func(w *plan.Workload) { w.Profile.Runtime = "docker" }, "docker runtime"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := twoNode(t)
			c := *w.Profile.Slurm
			p := *c.Pyxis
			c.Pyxis = &p
			w.Profile.Slurm = &c
			tc.mutate(&w)
			arts, err := slurm.New().Lower([]plan.Workload{w}, backends.Options{})
			if err == nil {
				t.Fatalf("Lower accepted it; the script:\n%s", arts[0].Data)
			}
			if arts != nil {
				t.Errorf("Lower returned artifacts with its error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not name %q", err, tc.want)
			}
		})
	}
}

func TestTimeLimitSeconds(t *testing.T) {
	for in, want := range map[string]int{
		"10": 600, "10:30": 630, "03:00:00": 10800, "1-0": 86400, "1-02:03": 93780, "2-00:00:01": 172801,
	} {
		if got, err := slurm.TimeLimitSeconds(in); err != nil || got != want {
			t.Errorf("TimeLimitSeconds(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0", "00:00:00", "3h", "1:60", "1:00:60", "1-24", "-1", "1-", "10:00\n"} {
		if _, err := slurm.TimeLimitSeconds(bad); err == nil {
			t.Errorf("TimeLimitSeconds(%q) accepted it", bad)
		}
	}
}

func TestPyxisImageGetsEnrootRegistrySeparator(t *testing.T) {
	w := twoNode(t)
	for img, want := range map[string]string{
		"vllm/vllm-openai:v0.11.0":            "vllm/vllm-openai:v0.11.0",
		"nvcr.io/nvidia/vllm:26.08-py3":       "nvcr.io#nvidia/vllm:26.08-py3",
		"localhost:5000/vllm:dev":             "localhost:5000#vllm:dev",
		"public.ecr.aws/q9t5s3a7/vllm-ci:abc": "public.ecr.aws#q9t5s3a7/vllm-ci:abc",
		"nvcr.io#nvidia/vllm:26.08":           "nvcr.io#nvidia/vllm:26.08",
		"/lustre/images/vllm.sqsh":            "/lustre/images/vllm.sqsh",
	} {
		c := *w.Profile.Slurm
		p := *c.Pyxis
		p.Image = img
		c.Pyxis = &p
		w.Profile.Slurm = &c
		s, err := slurm.Script(w)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(s, "'--container-image="+want+"'") {
			t.Errorf("image %s: no --container-image=%s in the script", img, want)
		}
	}
}
