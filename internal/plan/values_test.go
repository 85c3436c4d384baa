package plan

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestValueRules(t *testing.T) {
	for _, c := range []struct {
		check func(string) error
		name  string
		ok    []string
		bad   []string
	}{
		{CheckName, "CheckName",
			[]string{"qwen3_5_b200", "a.b-c", "8k-in-1k-out", "R1", strings.Repeat("n", MaxName)},
			[]string{strings.Repeat("n", MaxName+1), "", "-x", "_x", ".x", "a;b", "a b", "a/b", "a..b", "../x", "a\nb", "a$(x)", "ä"}},
		{CheckWord, "CheckWord",
			[]string{"org/model", "a b 'c' $(x)", "/path/to", "x-y"},
			[]string{"-x", "--privileged", "a\nb", "a\rb", "a\x1bb", "a\x00b", "a\u0085b"}},
		{CheckModel, "CheckModel",
			[]string{"Qwen/Qwen3-8B", "/models/a b", strings.Repeat("m", 255), strings.Repeat("o/", 84) + "m"},
			[]string{"-m", "a\nb", strings.Repeat("m", 256), strings.Repeat("o/", 86)}},
		{CheckImage, "CheckImage",
			[]string{"vllm/vllm-openai:nightly", "ghcr.io/o/i@sha256:00"},
			[]string{"", "-i", "a b", "a\tb", "--privileged"}},
		{CheckEnvName, "CheckEnvName",
			[]string{"HF_HOME", "_X", "a1", strings.Repeat("N", MaxEnvName)},
			[]string{"", "1A", "A-B", "A B", "A=B", strings.Repeat("N", MaxEnvName+1)}},
		{CheckArg, "CheckArg",
			[]string{"", "-x", "a\nb $(x) `y`", "--k=v"},
			[]string{"a\x00b"}},
		{CheckText, "CheckText",
			[]string{"echo a\n\techo b\n"},
			[]string{"a\x1bb", "a\rb"}},
	} {
		for _, s := range c.ok {
			if err := c.check(s); err != nil {
				t.Errorf("%s(%q) = %v, want ok", c.name, s, err)
			}
		}
		for _, s := range c.bad {
			if err := c.check(s); err == nil {
				t.Errorf("%s(%q) accepted", c.name, s)
			}
		}
	}
}

func TestCredentials(t *testing.T) {
	for _, n := range []string{"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "GITHUB_TOKEN", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "OPENAI_API_KEY", "DB_PASSWORD", "MY_SECRET", "WANDB_API_KEY", "hf_token"} {
		if !CredentialName(n) {
			t.Errorf("CredentialName(%q) = false", n)
		}
	}
	for _, n := range []string{"HF_HOME", "TOKENIZERS_PARALLELISM", "MONKEY", "VLLM_USE_V1", "NCCL_IB_GID_INDEX", "KEYBOARD", "SECRETS_DIR"} {
		if CredentialName(n) {
			t.Errorf("CredentialName(%q) = true", n)
		}
	}
	for _, v := range []string{"hf_abcdefghijklmnopqrstuvwxyz0123456789", "x=ghp_abcdefghijklmnopqrstuvwxyz0123456789", "AKIAABCDEFGHIJKLMNOP", "--key=sk-proj-abcdefghijklmnopqrstuvwx", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"} {
		if CredentialValue(v) == "" {
			t.Errorf("CredentialValue(%q) = \"\"", v)
		}
	}
	for _, v := range []string{"hf_home", "Qwen/Qwen3-8B", "AKIA", "sk-short", "/data/hf_cache", "ghp_short"} {
		if w := CredentialValue(v); w != "" {
			t.Errorf("CredentialValue(%q) = %q", v, w)
		}
	}
	if !RunnerOwned("WLC_RESULTS_PY") || !RunnerOwned("wlc_host") || RunnerOwned("MY_WLC") {
		t.Error("RunnerOwned")
	}
}

func TestLiteralStarts(t *testing.T) {
	for _, c := range []struct {
		expr string
		want []string
	}{
		{`\bhf_[A-Za-z0-9]{30,}`, []string{"hf_"}},
		{`\bgh[pousr]_x`, []string{"gho_x", "ghp_x", "ghr_x", "ghs_x", "ghu_x"}},
		{`\b(AKIA|ASIA)[0-9A-Z]{16}\b`, []string{"AKIA", "ASIA"}},
		{`^(ab|c)d`, []string{"abd", "cd"}},
		{`\bsk-(proj-|ant-)?x`, []string{"sk-"}},
		{`(ab|c+)d`, nil},                  // a branch that repeats: no start all matches share
		{`(ab+|cd)x`, []string{"a", "cd"}}, // a branch known only in part: its prefix, not extended
		{`(?i)hf_x`, nil},                  // case-folded
		{`a+b`, nil},                       // starts with a repetition
		{`[a-z]x`, nil},                    // a class too large to list
		{`x|`, nil},                        // may match the empty string
		{`\b[ab][cd][ef][gh]`, []string{"ace", "acf", "ade", "adf", "bce", "bcf", "bde", "bdf"}}, // 16 starts are too many: the first 8
	} {
		got := literalStarts(c.expr)
		if !slices.Equal(got, c.want) {
			t.Errorf("literalStarts(%q) = %q, want %q", c.expr, got, c.want)
		}
	}
	for _, c := range credentialShapes {
		if c.starts == nil {
			t.Errorf("credential shape %s has no literal start: every value of every workload runs its regexp", c.re)
		}
	}
}

// FuzzCredentialValue: the literal starts only skip regexps that cannot
// match, and every start a pattern gets holds for all of its matches.
func FuzzCredentialValue(f *testing.F) {
	for _, s := range []string{"hf_abcdefghijklmnopqrstuvwxyz0123456789", "x=ghp_abcdefghijklmnopqrstuvwxyz0123456789", "AKIAABCDEFGHIJKLMNOP", "--key=sk-proj-abcdefghijklmnopqrstuvwx", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "xoxb-0123456789ab", "bkua_abcdefghijklmnopqrstuvwxyz0123456789", "-----BEGIN RSA PRIVATE KEY-----", "Qwen/Qwen3-8B", "abd", "cd", "ccd"} {
		f.Add(s)
	}
	patterns := []string{`^(ab|c)d`, `\bx(y|z)w`, `(ab|c+)d`, `(ab+|cd)x`, `\b[ab][cd][ef][gh]`}
	f.Fuzz(func(t *testing.T, s string) {
		want := ""
		for _, c := range credentialShapes {
			if c.re.MatchString(s) {
				want = c.what
				break
			}
		}
		if got := CredentialValue(s); got != want {
			t.Errorf("CredentialValue(%q) = %q, its regexps say %q", s, got, want)
		}
		for _, p := range append(patterns, credentialPatterns()...) {
			starts := literalStarts(p)
			if starts == nil || !regexp.MustCompile(p).MatchString(s) {
				continue
			}
			if !slices.ContainsFunc(starts, func(x string) bool { return strings.Contains(s, x) }) {
				t.Errorf("%q matches %s but holds none of its starts %q", s, p, starts)
			}
		}
	})
}

func credentialPatterns() []string {
	var out []string
	for _, c := range credentialShapes {
		out = append(out, c.re.String())
	}
	return out
}
