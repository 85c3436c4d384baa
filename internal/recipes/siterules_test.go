package recipes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cuelang.org/go/cue/cuecontext"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// errorRules is each kind of error Vet reports with the site rule it
// states, quoted here from vllm-project/recipes (8959cf6) as the message
// must quote it. An error kind without a row, or a row whose error the
// synthetic checkout no longer provokes, fails the test.
var errorRules = []struct {
	kind, rule, file, quote string
}{
	{KindSchema, "schema", "CONTRIBUTING.md", "## YAML schema (authoritative)"},
	{KindUnknownHardware, "hardware-ids", "CLAUDE.md", "optional `hardware: { gpu_id: verified | unsupported }`"},
	{KindUnknownHardware, "generation-keys", "CLAUDE.md", "optional per-generation tweaks keyed by `hopper`, `blackwell`, `amd`, or the brand-wide `nvidia`"},
	{KindUnknownReference, "generation-keys", "CLAUDE.md", "optional per-generation tweaks keyed by `hopper`, `blackwell`, `amd`, or the brand-wide `nvidia`"},
	{KindUnknownReference, "opt-in-features", "CONTRIBUTING.md", "# features that default OFF (users tick them on)"},
	{KindUnknownReference, "mode-references", "CONTRIBUTING.md", "`args` + `modes`, unknown mode/variant references"},
	{KindUnknownReference, "strategy-ids", "CONTRIBUTING.md", "# subset of the 8 strategy ids in strategies/*.yaml"},
	{KindModelIDPath, "model-id", "CONTRIBUTING.md", "# MUST match the filename path"},
	{KindExclusiveFeatures, "exclusive-features", "src/components/recipes/CommandBuilder.jsx", "are mutually exclusive — enabling one clears the other."},
	{KindMemoryNode, "vram", "CLAUDE.md", "**Hardware is never blocked by VRAM.** Multi-node scales VRAM"},
	{KindDockerImage, "docker-image", "CONTRIBUTING.md", "override the Docker image:tag shown in Install → Docker"},
	{KindParallelArgs, "tp-in-args", "CLAUDE.md", "Do **not** put `--tensor-parallel-size` inside `extra_args`; it gets silently overridden by the strategy emitter"},
	{KindGPUsPerNode, "verified", "src/lib/command-synthesis.js", "`verified` = positively tested (separate signal)"},
}

// rulesCheckout writes the synthetic recipes checkout of
// testdata/script/vet_recipes_rules.txtar (the files under r/).
func rulesCheckout(t *testing.T) string { return checkout(t, "vet_recipes_rules.txtar") }

// checkout writes the recipes checkout (the files under r/) of the
// testscript archive name.
func checkout(t *testing.T, name string) string {
	t.Helper()
	a, err := txtar.ParseFile(filepath.Join(testenv.RepoRoot(t), "testdata", "script", name))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range a.Files {
		rel, ok := strings.CutPrefix(f.Name, "r/")
		if !ok {
			continue
		}
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestErrorsQuoteSiteRules: every error states a rule of the recipes site
// and quotes it; each kind of error is provoked and quotes the rule above.
func TestErrorsQuoteSiteRules(t *testing.T) {
	var findings Findings
	for _, name := range []string{"vet_recipes_rules.txtar", "vet_recipes_missed.txtar"} {
		dir := checkout(t, name)
		s, err := Load(cuecontext.New(), dir, dir)
		if err != nil {
			t.Fatal(err)
		}
		findings = append(findings, Vet(s)...)
	}
	seen := map[string]bool{}
	for _, f := range findings {
		if f.Severity != diag.Error {
			continue
		}
		r, ok := SiteRules[f.Rule]
		if !ok {
			t.Errorf("error states no site rule: %s", f.Diagnostic)
			continue
		}
		if !strings.Contains(f.Message, r.String()) {
			t.Errorf("error does not quote its rule %s: %s", f.Rule, f.Diagnostic)
		}
		seen[f.Kind+"/"+f.Rule] = true
	}
	for _, c := range errorRules {
		t.Run(c.kind+"/"+c.rule, func(t *testing.T) {
			r := SiteRules[c.rule]
			if r.File != c.file || r.Quote != c.quote {
				t.Errorf("rule %s quotes %s, want recipes %s: %q", c.rule, r, c.file, c.quote)
			}
			if !seen[c.kind+"/"+c.rule] {
				t.Errorf("no %s error stating %s in the synthetic checkout", c.kind, c.rule)
			}
		})
	}
	for k := range seen {
		found := false
		for _, c := range errorRules {
			found = found || c.kind+"/"+c.rule == k
		}
		if !found {
			t.Errorf("error kind/rule %s has no row in errorRules", k)
		}
	}
}

// TestSiteAccepts: what the site accepts or tolerates is never an error —
// object entries in meta.platforms (src/lib/platforms.js), expert
// parallelism offered on a 1-GPU device (hardware_match is unread), a
// precision on a fallback kernel (nvfp4 on Hopper, which the recipe opens
// with precision_hardware), and a precision wlc's catalog has no kernel
// for, silent where the recipe tunes the variant for that architecture.
func TestSiteAccepts(t *testing.T) {
	dir := rulesCheckout(t)
	s, err := Load(cuecontext.New(), dir, dir)
	if err != nil {
		t.Fatal(err)
	}
	var moe []Finding
	for _, f := range Vet(s) {
		if strings.HasSuffix(f.File, "models/org/moe.yaml") {
			moe = append(moe, f)
		}
	}
	has := func(path string, sev diag.Severity, kind string) bool {
		for _, f := range moe {
			if f.Path == path && f.Severity == sev && f.Kind == kind {
				return true
			}
		}
		return false
	}
	for _, f := range moe {
		switch {
		case strings.HasPrefix(f.Path, "meta.platforms"):
			t.Errorf("object platform entry refused: %s", f.Diagnostic)
		case strings.HasPrefix(f.Path, "variants.nvfp4"), strings.HasPrefix(f.Path, "variants.mxfp8_tuned") && f.Kind == KindPrecisionHardware:
			t.Errorf("fallback or tuned precision reported: %s", f.Diagnostic)
		}
	}
	if !has("meta.hardware.dgx_spark_gb10", diag.Warning, KindStrategyMatch) {
		t.Errorf("single_node_tep on the 1-GPU dgx_spark_gb10 is not a warning: %v", moe)
	}
	if !has("variants.mxfp8.precision", diag.Warning, KindPrecisionHardware) {
		t.Errorf("mxfp8 on h200 (no kernel in wlc's catalog, not tuned) is not a warning: %v", moe)
	}
}
