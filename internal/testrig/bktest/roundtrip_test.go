package bktest

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRoundTripAcceptsCanonicalRewrites: input forms go-pipeline rewrites
// without changing meaning are not reported.
func TestRoundTripAcceptsCanonicalRewrites(t *testing.T) {
	RoundTrip(t, []byte(`steps:
  - name: a
    id: a
    commands: [echo 1, echo 2]
    plugins:
      - docker#v5.12.0: {image: x}
      - kubernetes: {}
  - plugins:
      docker#v5.12.0: {image: y}
  - wait
`))
}

// TestRoundTripCatchesCoercion: values go-pipeline (and so the agent)
// silently turns into strings are reported with the step and field, so the
// backend emits strings in the first place and its goldens show what is
// uploaded.
func TestRoundTripCatchesCoercion(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"matrix numbers", "steps:\n  - command: x\n    key: m\n    matrix: {setup: {c: [1, 8]}}\n",
			`step /steps/0 key "m" changed`},
		{"env number and bool", "steps:\n  - command: x\n    label: e\n    env: {A: 1, B: true}\n",
			`step /steps/0 label "e" changed`},
		{"nested in a group", "steps:\n  - group: g\n    steps:\n      - command: x\n        key: inner\n        env: {A: 1}\n",
			`step /steps/0/steps/0 key "inner" changed`},
	} {
		_, err := CheckRoundTrip([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: CheckRoundTrip = %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestYAMLToJSONKeepsTypes(t *testing.T) {
	got, err := YAMLToJSON([]byte(`a: 60
b: "60"
c: true
d: "true"
e: ~
f: 1.5
g: 0x1F
h: 2024-01-01
0x0b: int key
base: &b {p: 1, q: 1}
merged: {<<: *b, q: 2}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"a": int64(60), "b": "60", "c": true, "d": "true", "e": nil, "f": 1.5, "g": int64(31),
		"h": "2024-01-01", "11": "int key",
		"base":   map[string]any{"p": int64(1), "q": int64(1)},
		"merged": map[string]any{"p": int64(1), "q": int64(2)},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	for name, y := range map[string]string{
		"duplicate":  "a: 1\na: 2\n",
		"second doc": "a: 1\n---\nb: 2\n",
		"empty":      "",
		"syntax":     "steps: [\n",
		"inf":        "a: .inf\n",
		"null key":   "~: 1\n",
	} {
		if _, err := YAMLToJSON([]byte(y)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
