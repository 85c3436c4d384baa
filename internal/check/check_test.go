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
