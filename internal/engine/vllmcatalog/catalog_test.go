package vllmcatalog

import (
	"testing"
)

func TestLess(t *testing.T) {
	ordered := []string{"v0.9.1", "v0.10.0", "v0.11.0", "v0.13.0", "main-2026-01-01", "main-2026-08-17", "team-image"}
	for i := range ordered {
		for j := range ordered {
			if got, want := Less(ordered[i], ordered[j]), i < j; got != want {
				t.Errorf("Less(%s, %s) = %v, want %v", ordered[i], ordered[j], got, want)
			}
		}
	}
}

func TestReleaseOf(t *testing.T) {
	for tag, want := range map[string]string{"v0.13.0": "v0.13.0", "0.13.0-cu130": "v0.13.0", "v0.11.0rc1": "v0.11.0", "nightly": "", "nightly-f25953c": "", "latest": ""} {
		if got, _ := ReleaseOf(tag); got != want {
			t.Errorf("ReleaseOf(%q) = %q, want %q", tag, got, want)
		}
	}
}

func TestBuiltin(t *testing.T) {
	var labels []string
	for _, c := range Builtin() {
		labels = append(labels, c.Label)
		if len(c.Serve) < 150 || len(c.Bench) < 50 {
			t.Errorf("%s: %d serve and %d bench options; the built-in file lost some", c.Label, len(c.Serve), len(c.Bench))
		}
	}
	if len(labels) < 4 || labels[len(labels)-1] != "main-2026-08-17" {
		t.Errorf("built-in catalogs = %v, want releases then main-2026-08-17 last", labels)
	}
}
