package recipes

import "fmt"

// SiteRule is a rule of the recipes site, quoted verbatim from its source
// (vllm-project/recipes at the snapshot reference/recipes.md describes,
// 8959cf6). Every error Vet reports states one of these, and says which:
// an error is a claim about the recipe, so it has to rest on the site's
// own word, not on wlc's.
type SiteRule struct {
	File, Quote string
}

func (r SiteRule) String() string { return fmt.Sprintf("recipes %s: %q", r.File, r.Quote) }

// The site's rules Vet enforces, by name.
var SiteRules = map[string]SiteRule{
	// The YAML format: wlc's schema (schema/recipe/recipe.cue) types it.
	"schema": {"CONTRIBUTING.md", "## YAML schema (authoritative)"},
	// Hardware ids are the taxonomy's profiles; the hardware row lists them.
	"hardware-ids":       {"CLAUDE.md", "optional `hardware: { gpu_id: verified | unsupported }`"},
	"generation-keys":    {"CLAUDE.md", "optional per-generation tweaks keyed by `hopper`, `blackwell`, `amd`, or the brand-wide `nvidia`"},
	"model-id":           {"CONTRIBUTING.md", "# MUST match the filename path"},
	"strategy-ids":       {"CONTRIBUTING.md", "# subset of the 8 strategy ids in strategies/*.yaml"},
	"opt-in-features":    {"CONTRIBUTING.md", "# features that default OFF (users tick them on)"},
	"mode-references":    {"CONTRIBUTING.md", "`args` + `modes`, unknown mode/variant references"},
	"exclusive-features": {"src/components/recipes/CommandBuilder.jsx", "are mutually exclusive — enabling one clears the other."},
	"vram":               {"CLAUDE.md", "**Hardware is never blocked by VRAM.** Multi-node scales VRAM"},
	"docker-image":       {"CONTRIBUTING.md", "override the Docker image:tag shown in Install → Docker"},
	// The strategy's parallel flags come after base_args and variant
	// args and win (buildArgs' order, dedupeArgs last-wins).
	"tp-in-args": {"CLAUDE.md", "Do **not** put `--tensor-parallel-size` inside `extra_args`; it gets silently overridden by the strategy emitter"},
	// A verified mark is the recipe's word that the rendered command runs.
	"verified": {"src/lib/command-synthesis.js", "`verified` = positively tested (separate signal)"},
	// Warnings cite too, so a reader sees why they are not errors.
	"hardware-match-unread": {"CLAUDE.md", "the (currently unread) `hardware_match.min_gpus` in `strategies/*.yaml`"},
	"precision-gate":        {"src/lib/command-synthesis.js", "NVFP4 is NVIDIA Blackwell-only (sm_100+) by default. A variant can override"},
	"precision-enum":        {"CONTRIBUTING.md", "# bf16|fp8|nvfp4|fp4|int4|int8|awq|gptq|mxfp4"},
	"omni-flag":             {"CLAUDE.md", "The `--omni` flag is auto-injected, so don't add it to `model.base_args`."},
}
