package vllmflags

import (
	"strings"
	"testing"

	"github.com/wlcdev/wlc/internal/engine/vllmcatalog"
)

func TestSetForImage(t *testing.T) {
	s := Builtin()
	team := &vllmcatalog.Catalog{Label: "rocm-nightly", Serve: []*vllmcatalog.Flag{{Options: []string{"--model"}, Kind: vllmcatalog.Value}}}
	if err := s.Add(team); err != nil {
		t.Fatal(err)
	}
	for img, label := range map[string]string{"vllm/vllm-openai-rocm:nightly": "rocm-nightly", "nightly-0123abc": "v0.11.0", "registry.example/*:nightly-*": "v0.13.0", "registry.example/team:nightly*": "rocm-nightly"} {
		if err := s.Map(img, label); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ image, want, standIn string }{
		{"vllm/vllm-openai:v0.10.0", "v0.10.0", ""},                    // exact release
		{"registry:5000/vllm/vllm-openai:0.13.0-cu130", "v0.13.0", ""}, // port in the registry, build suffix
		{"vllm/vllm-openai:v0.11.2", "v0.11.0", "v0.11.0, the same minor release, stands in for vllm/vllm-openai:v0.11.2"},
		{"vllm/vllm-openai:v0.12.0", "main-2026-08-17", "main-2026-08-17, the newest catalog, stands in for vllm/vllm-openai:v0.12.0"},
		{"vllm/vllm-openai:nightly", "main-2026-08-17", "the newest catalog, stands in for vllm/vllm-openai:nightly, which has no catalog of its own"},
		{"vllm/vllm-openai:nightly-f25953c", "main-2026-08-17", "stands in for vllm/vllm-openai:nightly-f25953c"},
		{"vllm/vllm-openai-rocm:nightly", "rocm-nightly", "settings.vllm_flags.images maps vllm/vllm-openai-rocm:nightly to rocm-nightly"},
		{"vllm/vllm-openai:nightly-0123abc", "v0.11.0", "settings.vllm_flags.images maps the tag nightly-0123abc to v0.11.0"},
		// Patterns: the longer one wins; * does not cross /.
		{"registry.example/team:nightly-feed", "rocm-nightly", "settings.vllm_flags.images maps registry.example/team:nightly* to rocm-nightly"},
		{"registry.example/other:nightly-feed", "v0.13.0", "settings.vllm_flags.images maps registry.example/*:nightly-* to v0.13.0"},
		{"registry.example/a/b:nightly-feed", "main-2026-08-17", "the newest catalog"},
	} {
		c := s.For(tc.image)
		if c.Label != tc.want || !strings.Contains(c.StandIn, tc.standIn) || (tc.standIn == "") != (c.StandIn == "") {
			t.Errorf("For(%q) = %s (%q), want %s (…%s…)", tc.image, c.Label, c.StandIn, tc.want, tc.standIn)
		}
	}
	if err := s.Map("x:y", "v0.99.0"); err == nil || !strings.Contains(err.Error(), "no catalog is labelled v0.99.0; map the image to one of v0.10.0, v0.11.0, v0.13.0, main-2026-08-17, rocm-nightly, or add") {
		t.Errorf("Map(unknown label) = %v", err)
	}
	if err := s.Add(&vllmcatalog.Catalog{Label: "v0.13.0"}); err == nil || !strings.Contains(err.Error(), "a catalog labelled v0.13.0 exists already") {
		t.Errorf("Add(built-in label) = %v", err)
	}
}
