package vllmflags

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/wlcdev/wlc/internal/engine/vllmcatalog"
)

// Set is the catalogs workloads are checked against: the built-in ones,
// the ones a team added for its images, and the team's mapping of images
// to catalogs.
type Set struct {
	byLabel map[string]*vllmcatalog.Catalog
	// newest stands in for an image no catalog covers: the newest
	// built-in catalog (an upstream main snapshot, else the highest
	// release).
	newest string
	images map[string]string
	// MapSetting names where images are mapped, for messages.
	MapSetting string

	mu       sync.Mutex
	checkers map[string]*Catalog
}

// Builtin is the set of the catalogs built into wlc.
func Builtin() *Set {
	s := &Set{byLabel: map[string]*vllmcatalog.Catalog{}, images: map[string]string{}, checkers: map[string]*Catalog{}, MapSetting: "settings.vllm_flags.images"}
	for _, c := range vllmcatalog.Builtin() {
		s.byLabel[c.Label] = c
		if s.newest == "" || vllmcatalog.Less(s.newest, c.Label) {
			s.newest = c.Label
		}
	}
	return s
}

// Add adds a team's catalog; its label must be new.
func (s *Set) Add(c *vllmcatalog.Catalog) error {
	if _, ok := s.byLabel[c.Label]; ok {
		return fmt.Errorf("a catalog labelled %s exists already (built in: %s); give yours another label", c.Label, strings.Join(s.builtinLabels(), ", "))
	}
	s.byLabel[c.Label] = c
	return nil
}

// Lookup returns the catalog labelled label.
func (s *Set) Lookup(label string) (*vllmcatalog.Catalog, bool) {
	c, ok := s.byLabel[label]
	return c, ok
}

// Map checks image (a full reference or a tag; * matches any run of
// characters but /, e.g. vllm/vllm-openai-rocm:nightly*) against the
// catalog labelled label.
func (s *Set) Map(image, label string) error {
	if _, err := path.Match(image, ""); err != nil {
		return fmt.Errorf("%q is not a valid image pattern: %v", image, err)
	}
	if _, ok := s.byLabel[label]; !ok {
		return fmt.Errorf("no catalog is labelled %s; map the image to one of %s, or add a catalog with that label (settings.vllm_flags.catalogs)", label, strings.Join(s.Labels(), ", "))
	}
	s.images[image] = label
	return nil
}

// Labels lists the known catalogs, oldest release first.
func (s *Set) Labels() []string {
	var out []string
	for l := range s.byLabel {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return vllmcatalog.Less(out[i], out[j]) })
	return out
}

func (s *Set) builtinLabels() []string {
	var out []string
	for _, c := range vllmcatalog.Builtin() {
		out = append(out, c.Label)
	}
	return out
}

// For returns the catalog image's options are checked against:
//  1. the catalog the team maps the image (or its tag) to;
//  2. a release tag: that release's catalog, else the same minor
//     release's;
//  3. the newest built-in catalog.
//
// Unless it is the image's own release, the catalog says what it stands
// in for (Catalog.StandIn), and every finding says so.
func (s *Set) For(image string) *Catalog {
	tag := tagOf(image)
	if label, ok := s.images[image]; ok {
		return s.checker(label, fmt.Sprintf("%s maps %s to %s", s.MapSetting, image, label))
	}
	if label, ok := s.images[tag]; ok && tag != "" {
		return s.checker(label, fmt.Sprintf("%s maps the tag %s to %s", s.MapSetting, tag, label))
	}
	// Patterns, in a fixed order: the longest (most specific) first.
	var pats []string
	for p := range s.images {
		if strings.Contains(p, "*") {
			pats = append(pats, p)
		}
	}
	sort.Slice(pats, func(i, j int) bool {
		if len(pats[i]) != len(pats[j]) {
			return len(pats[i]) > len(pats[j])
		}
		return pats[i] < pats[j]
	})
	for _, p := range pats {
		if ok, _ := path.Match(p, image); ok || tag != "" && func() bool { ok, _ := path.Match(p, tag); return ok }() {
			return s.checker(s.images[p], fmt.Sprintf("%s maps %s to %s", s.MapSetting, p, s.images[p]))
		}
	}
	if rel, ok := vllmcatalog.ReleaseOf(tag); ok {
		if _, ok := s.byLabel[rel]; ok {
			standIn := ""
			if tag != rel && strings.TrimPrefix(tag, "v") != strings.TrimPrefix(rel, "v") && !sameRelease(tag, rel) {
				standIn = fmt.Sprintf("%s stands in for %s", rel, image)
			}
			return s.checker(rel, standIn)
		}
		for _, label := range s.Labels() {
			if l, ok := vllmcatalog.ReleaseOf(label); ok && minor(l) == minor(rel) {
				return s.checker(label, fmt.Sprintf("%s, the same minor release, stands in for %s, which has no catalog of its own; add one or map the image in %s (docs/flag-catalogs.md)", label, image, s.MapSetting))
			}
		}
	}
	what := image
	if what == "" {
		what = "an image wlc cannot name"
	}
	return s.checker(s.newest, fmt.Sprintf("%s, the newest catalog, stands in for %s, which has no catalog of its own; add one or map the image in %s (docs/flag-catalogs.md)", s.newest, what, s.MapSetting))
}

// sameRelease reports whether tag is rel with a build suffix only
// (0.13.0-cu130, v0.13.0-rocm): the release's own catalog.
func sameRelease(tag, rel string) bool {
	rest := strings.TrimPrefix(strings.TrimPrefix(tag, "v"), strings.TrimPrefix(rel, "v"))
	return rest == "" || strings.HasPrefix(rest, "-") || strings.HasPrefix(rest, "+")
}

func minor(rel string) string { return rel[:strings.LastIndex(rel, ".")] }

// tagOf is an image reference's tag ("" when it has none).
func tagOf(image string) string {
	ref, _, _ := strings.Cut(image, "@")
	if i := strings.LastIndex(ref, ":"); i >= 0 && !strings.Contains(ref[i:], "/") {
		return ref[i+1:]
	}
	return ""
}

func (s *Set) checker(label, standIn string) *Catalog {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.checkers[label]
	if !ok {
		c = New(s.byLabel[label])
		s.checkers[label] = c
	}
	cp := *c
	cp.StandIn = standIn
	return &cp
}
