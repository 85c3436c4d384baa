package load_test

import (
	"maps"
	"strings"
	"testing"

	"github.com/wlcdev/wlc/internal/load"
)

// TestLoadPastBrokenFiles: a workload file with a syntax error and one
// with a compile error (an unquoted string) do not hide the package's
// other findings, loaded sharded as loaded as one; their own workloads go
// unchecked. A broken file that is more than workloads (the helpers every
// workload uses) is reported alone, with the other syntax errors.
func TestLoadPastBrokenFiles(t *testing.T) {
	files := maps.Clone(brokenFiles)
	files["workloads/s.cue"] = `package workloads

workloads: s_syntax: _llama & {profile: "H200",, gpus_per_node: 8}
`
	files["workloads/u.cue"] = `package workloads

workloads: u_ref: _llama & {profile: "H200", gpus_per_node: 8, precision: bf16}
`
	out := requireSameLoad(t, writePkg(t, files), load.Options{}, 1, true)
	requireFindings(t, out,
		"workloads/s.cue:3:48: error: expected operand, found ','",
		"workloads/u.cue:3:75: error: workloads.u_ref.precision: reference \"bf16\" not found; a string needs quotes: \"bf16\" (or declare bf16 in the package)",
		// brokenFiles' own findings (TestShardedLoadBroken)
		"workloads/b.cue:5:17: error: workloads.dup.gpus_per_node: conflicting values 4 and 8",
		"workloads/c.cue:4:12: error: workloads.c_missing: required field missing: gpus_per_node",
		"workloads.d_profile.profile: unknown profile H100",
		"workload a_ok ",
	)
	for _, unwanted := range []string{"workload s_syntax", "workload u_ref"} {
		if strings.Contains(out, unwanted) {
			t.Errorf("a broken file's workload was loaded (%q):\n%s", unwanted, out)
		}
	}

	t.Run("broken helpers", func(t *testing.T) {
		files := maps.Clone(files)
		files["workloads/helpers.cue"] = strings.Replace(files["workloads/helpers.cue"], `precision: "bf16"`, `precision: "bf16",,`, 1)
		out := requireSameLoad(t, writePkg(t, files), load.Options{}, 1, false)
		want := "workloads/helpers.cue:5:20: error: expected operand, found ','; a value is missing before the comma: write it or remove the comma\n" +
			"workloads/s.cue:3:48: error: expected operand, found ','; a value is missing before the comma: write it or remove the comma\n"
		if out != want {
			t.Errorf("want the two files' syntax errors alone (the same mistake in two files is two findings), got:\n%s", out)
		}
	})
}
