package vllmflags

import (
	"path/filepath"
	"testing"

	"github.com/wlcdev/wlc/internal/testenv"
)

func TestSetForImage(t *testing.T) {
	s, err := LoadPath(filepath.Join(testenv.SharedDir(t), "corpus", "vllm-flags"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ image, want string }{
		{"", "main-2026-08-17"},                                    // no pin: the newest snapshot
		{"vllm/vllm-openai:nightly", "main-2026-08-17"},            // not a release
		{"vllm/vllm-openai:v0.10.0", "v0.10.0"},                    // exact release
		{"vllm/vllm-openai:v0.11.2", "v0.11.0"},                    // same minor release
		{"registry:5000/vllm/vllm-openai:0.13.0-cu130", "v0.13.0"}, // port in the registry, no v
		{"vllm/vllm-openai:v0.12.0", "main-2026-08-17"},            // unknown minor
	} {
		if got := s.For(tc.image).Label; got != tc.want {
			t.Errorf("For(%q) = %s, want %s", tc.image, got, tc.want)
		}
	}
}

func TestVersionLess(t *testing.T) {
	ordered := []string{"v0.9.1", "v0.10.0", "v0.11.0", "v0.13.0", "main-2026-01-01", "main-2026-08-17"}
	for i := range ordered {
		for j := range ordered {
			if got, want := versionLess(ordered[i], ordered[j]), i < j; got != want {
				t.Errorf("versionLess(%s, %s) = %v, want %v", ordered[i], ordered[j], got, want)
			}
		}
	}
}
