package check_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wlcdev/wlc/internal/check"
	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/schema"
)

// TestRunNames: of two workloads with one run name the first in source
// order keeps it; the other is refused at the field that made the name.
func TestRunNames(t *testing.T) {
	got := check.RunNames([]check.Named{
		{Name: "b", RunName: "x", Field: "dashboard_name", File: "workloads/a.cue", Line: 9},
		{Name: "a", RunName: "x", File: "workloads/a.cue", Line: 3},
		{Name: "c", RunName: "c", File: "workloads/c.cue", Line: 1},
	})
	want := map[string]check.Diagnostic{"b": {Path: "dashboard_name", Severity: diag.Error,
		Message: `run name "x" is already the run name of workload a (workloads/a.cue): it names the results folder and the dashboards' rows, so the two jobs would mix their results; rename one of them or give it another dashboard_name`}}
	if d := cmp.Diff(want, got); d != "" {
		t.Error(d)
	}
}

// TestWorkloadRules: findings come by path relative to the workload, the
// value rules marked as such (the loader drops one the schema already
// refused at the same place).
func TestWorkloadRules(t *testing.T) {
	w := &check.Workload{Decoded: true, Workload: schema.Workload{
		Name: "w", Profile: "H200", Model: "org/m-FP8", Precision: "bf16",
		Env:     map[string]string{"HF_TOKEN": "hf_abc", "A": "1"},
		Secrets: []string{"HF_TOKEN"},
	}}
	got := check.WorkloadRules(w, &check.Env{})
	want := []check.Diagnostic{
		{Path: "", Severity: diag.Error, Message: "workload runs nothing: define at least one of lm_eval, vllm_bench, bfcl or custom_steps (or a custom_job in the server's place)"},
		{Path: "env.HF_TOKEN", Severity: diag.Error, Message: "HF_TOKEN is a secret; its value must not be written into generated files: remove it from env (secrets are passed by name from the job's environment)"},
		{Path: "precision", Severity: diag.Warning, Message: "model id org/m-FP8 looks like a fp8 checkpoint but precision is bf16; check which weights the checkpoint holds"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	// A value that looks like a credential, in a map the schema types
	// loosely: a value finding.
	p := &schema.Profile{Name: "P", Env: map[string]string{"X": "ghp_" + "0123456789abcdefghijklmnopqrstuvwxyz"}}
	fs := check.ProfileRules(p)
	if len(fs) != 1 || fs[0].Path != "env.X" || !fs[0].Value || fs[0].Severity != diag.Error {
		t.Errorf("a GitHub token in a profile's env: %+v, want one value finding at env.X", fs)
	}
}

// TestPorts: two workloads that fix one port are refused only where
// their jobs can share a host: same pool, neither exclusive, both fitting
// on its GPUs together; the first in source order keeps the port.
func TestPorts(t *testing.T) {
	h200 := func(name string, line, port, gpus int) check.Served {
		return check.Served{Name: name, Port: port, Pool: `queue "h200"`, GPUs: gpus, HostGPUs: 8, File: "workloads/a.cue", Line: line}
	}
	slurm := func(name string, line int, exclusive bool) check.Served {
		return check.Served{Name: name, Port: 9000, Pool: `Slurm partition "gpu"`, GPUs: 4, HostGPUs: 4, Exclusive: exclusive, File: "workloads/s.cue", Line: line}
	}
	other := h200("other_queue", 50, 8000, 1)
	other.Pool = `queue "h200-large"`
	got := check.Ports([]check.Served{
		h200("second", 20, 8000, 4),
		h200("first", 10, 8000, 4),
		h200("whole_host", 30, 8000, 8), // 4 + 8 > 8: never beside first
		h200("other_port", 40, 8001, 1),
		other,
		h200("derived", 60, 0, 1),
		slurm("s1", 1, true), slurm("s2", 2, true), // exclusive: never on one node
	})
	want := map[string]check.Diagnostic{"second": {Path: "port", Severity: diag.Error,
		Message: `port 8000 is also the port of workload first (workloads/a.cue), and both jobs run on queue "h200", where one host can hold both (4 + 4 of 8 GPUs): the second to start would find the port taken; remove port (each job then picks a free port of its own) or give one of them another port`}}
	if d := cmp.Diff(want, got); d != "" {
		t.Error(d)
	}
	// A Slurm partition without --exclusive packs jobs onto one node.
	if got := check.Ports([]check.Served{slurm("s1", 1, false), slurm("s2", 2, false)}); len(got) != 0 {
		t.Errorf("4 + 4 GPUs of a 4-GPU node cannot share it, got %v", got)
	}
	s1, s2 := slurm("s1", 1, false), slurm("s2", 2, false)
	s1.GPUs, s2.GPUs = 2, 2
	if got := check.Ports([]check.Served{s1, s2}); got["s2"].Path != "port" || len(got) != 1 {
		t.Errorf("two 2-GPU jobs on a shared 4-GPU node: got %v, want s2 refused", got)
	}
}
