package buildkite_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/buildkite/go-pipeline"
	"github.com/buildkite/go-pipeline/ordered"

	"github.com/wlcdev/wlc/backends/buildkite"
)

// sameAsYAMLv3 asserts the direct writer writes p exactly as yaml.v3 does,
// or declines (slow path) when wantDirect is false.
func sameAsYAMLv3(t *testing.T, name string, p *pipeline.Pipeline, wantDirect bool) {
	t.Helper()
	const header = "# header\n"
	want, err := buildkite.EncodeYAMLv3(header, p)
	got, derr := buildkite.EncodeDirect(header, p)
	if err != nil {
		// What yaml.v3 cannot write, the writer leaves to it (and its error).
		if !errors.Is(derr, buildkite.ErrSlowPath) {
			t.Errorf("%s: yaml.v3 fails (%v) but the direct writer wrote it", name, err)
		}
		return
	}
	err = derr
	switch {
	case errors.Is(err, buildkite.ErrSlowPath):
		if wantDirect {
			t.Errorf("%s: the direct writer declined", name)
		}
		return
	case err != nil:
		t.Fatalf("%s: %v", name, err)
	case !wantDirect:
		t.Errorf("%s: the direct writer wrote it, want the slow path", name)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: the direct writer differs from yaml.v3:\n%s", name, lineDiff(want, got))
	}
}

// TestEmitMatchesYAMLv3: strings of every kind yaml.v3 writes differently
// (plain, single- and double-quoted, keywords, numbers, indicators,
// unicode, literal blocks) in every place the pipeline holds them.
func TestEmitMatchesYAMLv3(t *testing.T) {
	scalars := []string{
		"plain", "results/x/**/*", "vllm/vllm-openai:latest", ":b200: qwen", "a: b", "a #b", "a#b", "#x", "- x", "-x", "--- x",
		"...", "?x", "? x", "x:", "[x]", "{x}", "x,y", "&a", "*a", "!t", "|x", ">x", "'q'", `"q"`, "%x", "@x", "`x`",
		"true", "True", "TRUE", "false", "yes", "no", "on", "off", "y", "n", "Y", "N", "null", "Null", "~", "", " ",
		" lead", "trail ", "1", "-1", "+1", "0x1f", "0o17", "0b101", "1_000", "1.5", ".5", "1e3", ".inf", "-.Inf", ".nan",
		"1:20", "190:20:30.15", "2001-12-14", "2001-12-14t21:59:43.10-05:00", "12:30", "0123", "1.2.3", "v1.2",
		"tab\there", "ctl\x01", "bell\a", "del\x7f", "nbsp\u00a0", "é", "日本", "emoji 🚀", "bom\ufeff", "\u2028",
		"back\\slash", "it's", `say "hi"`, "$HOME", "$${X:-y}", "a  b", "nvidia.com/gpu", "HF_HOME", "timeout_in_minutes",
		"<<", "=", "x=y", "a: b: c", "1 2", "-", "--", ":", "::", "a:b", "/path", "_x", "ŝ",
		// Strings holding ": " (written in single quotes without yaml.v3)
		// and '*' after the first character (written plain).
		"it's: here", "a: b #c", "x: 'y'", `say: "hi"`, "a:  b", "a: b ", " a: b", "a: b\t", "é: x", "a: 日本",
		"- a: b", "? a: b", "# a: b", "&a: b", "*a: b", "%a: b", "@a: b", "`a: b", "!a: b", "|a: b", ">a: b",
		"[a: b]", "{a: b}", "a: b,c", "--- a: b", "... a: b", "1: 2", "true: x", "null: ~", "2001-12-14: x",
		"a:b: c", "'a: b'", "a: b'", "a: ", ": a", ":h200: glm_4_6-h200_r0001", "a*", "a**b", "/x/**/*", "_*",
		"x*:", "results/a b/**/*", "a*: b",
	}
	blocks := []string{
		"echo a\necho b\n", "echo a\necho b", "a\n\nb\n", "# c\nx\n", "x\n\n", " x\ny\n", "\nx\n", "x \ny\n", "x\ny \n",
		"x\ty\nz\n", "é\nx\n", "x\n  indented\n", "a\n", "a\nb\n\n\n",
	}
	var all []string
	all = append(all, scalars...)
	all = append(all, blocks...)
	for i, s := range all {
		name := fmt.Sprintf("%d:%q", i, s)
		// As a label, a command, an env value, a remaining field, a list
		// item, and an ordered map value.
		agents := ordered.NewMap[string, any](2)
		agents.Set("queue", s)
		agents.Set("list", []any{s, 3, true})
		p := &pipeline.Pipeline{Steps: pipeline.Steps{&pipeline.CommandStep{
			Label:   s,
			Command: s,
			Env:     map[string]string{"A_VALUE": s},
			RemainingFields: map[string]any{
				"agents":         agents,
				"artifact_paths": []string{s, "x"},
				"skip":           s,
			},
		}}}
		sameAsYAMLv3(t, name, p, directOK(s))
		// As a key.
		p = &pipeline.Pipeline{Steps: pipeline.Steps{&pipeline.CommandStep{Command: "true", Env: map[string]string{s: "v"}}}}
		sameAsYAMLv3(t, "key "+name, p, directOK(s) && !strings.Contains(s, "\n") && keyOK(t, s))
	}
}

// directOK: the writer declines multi-line strings yaml.v3 would not write
// as a plain `|` or `|-` block.
func directOK(s string) bool {
	if s == "<<" {
		return false
	}
	if !strings.Contains(s, "\n") {
		return true
	}
	if s[0] == ' ' || s[0] == '\n' || strings.HasSuffix(s, "\n\n") || strings.HasSuffix(s, " ") || strings.Contains(s, " \n") {
		return false
	}
	for _, r := range s {
		if (r < 0x20 || r > 0x7e) && r != '\n' {
			return false
		}
	}
	return true
}

// keyOK: a key is written directly only when yaml.v3 writes it plain.
func keyOK(t *testing.T, k string) bool {
	t.Helper()
	out, err := buildkite.EncodeYAMLv3("", &pipeline.Pipeline{Steps: pipeline.Steps{&pipeline.CommandStep{Command: "true", Env: map[string]string{k: "v"}}}})
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Contains(out, []byte("\n      "+k+": v\n"))
}

// TestEmitShapes: the collections the backend builds (k8s pod specs with
// nested ordered maps, lists of maps, empty maps and lists, ints, bools,
// nil, floats from a JSON override, yaml.v3's numeric key order) and a
// top-level env.
func TestEmitShapes(t *testing.T) {
	om := func(kv ...any) *ordered.Map[string, any] {
		m := ordered.NewMap[string, any](len(kv) / 2)
		for i := 0; i < len(kv); i += 2 {
			m.Set(kv[i].(string), kv[i+1])
		}
		return m
	}
	env := ordered.NewMap[string, string](2)
	env.Set("Z_FIRST", "z")
	env.Set("A_SECOND", "a b")
	p := &pipeline.Pipeline{
		Steps: pipeline.Steps{
			&pipeline.CommandStep{
				Key:     "k1",
				Label:   ":x: one",
				Command: "echo one\n",
				Plugins: pipeline.Plugins{{Source: "kubernetes", Config: om(
					"podSpec", om("containers", []any{om("image", "img:1", "resources", om("limits", om("nvidia.com/gpu", 8))),
						om("name", "b", "args", []any{})},
						"volumes", []any{om("name", "e", "emptyDir", map[string]any{})},
						"hostNetwork", true,
						"override", map[string]any{"pvc": map[string]any{"claimName": "c", "size": 1.5, "num": 2.0, "none": nil, "ok": false}},
					))}, {Source: "docker#v5", Config: nil}},
				Env: map[string]string{"b10": "1", "b9": "2", "B": "3", "a": "4", "a1": "5", "a01": "6", "x_1": "7", "x1": "8"},
				RemainingFields: map[string]any{
					"timeout_in_minutes": 60, "concurrency": 1, "concurrency_group": "wlc/q", "concurrency_method": "eager",
					"artifact_paths": []string{"results/x/**/*"}, "soft_fail": true, "depends_on": []string{}, "retry": map[string]any{},
				},
			},
			&pipeline.CommandStep{Command: ""},
		},
		Env: env,
	}
	sameAsYAMLv3(t, "shapes", p, true)

	// Shapes the backend never builds go through yaml.v3.
	for name, p := range map[string]*pipeline.Pipeline{
		"wait step":     {Steps: pipeline.Steps{&pipeline.CommandStep{Command: "a"}, &pipeline.WaitStep{}}},
		"list in list":  {Steps: pipeline.Steps{&pipeline.CommandStep{Command: "a", RemainingFields: map[string]any{"x": []any{[]any{"a"}}}}}},
		"matrix":        {Steps: pipeline.Steps{&pipeline.CommandStep{Command: "a", Matrix: &pipeline.Matrix{Setup: pipeline.MatrixSetup{"": {"1"}}}}}},
		"pipeline keys": {Steps: pipeline.Steps{&pipeline.CommandStep{Command: "a"}}, RemainingFields: map[string]any{"agents": map[string]any{"queue": "q"}}},
	} {
		sameAsYAMLv3(t, name, p, false)
	}
}
