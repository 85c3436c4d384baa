package vllmflags

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Set is the catalogs of several vLLM versions (a directory of them); each
// workload is checked against the catalog of the image it pins.
type Set struct {
	byLabel map[string]*Catalog
	// fallback checks workloads that pin no known version: the newest
	// main-* snapshot, else the highest release.
	fallback *Catalog
}

// Single is a set of one catalog, used for every workload.
func Single(c *Catalog) *Set { return &Set{byLabel: map[string]*Catalog{c.Label: c}, fallback: c} }

// LoadPath reads a catalog file, or every *.json catalog of a directory.
func LoadPath(path string) (*Set, error) {
	fi, err := os.Stat(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("%s does not exist; give a catalog file (JSON) or a directory of them", path)
		}
		return nil, err
	}
	if !fi.IsDir() {
		c, err := Load(path)
		if err != nil {
			return nil, err
		}
		return Single(c), nil
	}
	files, _ := filepath.Glob(filepath.Join(path, "*.json"))
	sort.Strings(files)
	s := &Set{byLabel: map[string]*Catalog{}}
	var labels []string
	for _, f := range files {
		c, err := Load(f)
		if err != nil {
			continue // not a catalog (e.g. an index file)
		}
		s.byLabel[c.Label] = c
		labels = append(labels, c.Label)
	}
	if len(labels) == 0 {
		return nil, fmt.Errorf("%s holds no vLLM flag catalog (*.json)", path)
	}
	sort.Slice(labels, func(i, j int) bool { return versionLess(labels[i], labels[j]) })
	s.fallback = s.byLabel[labels[len(labels)-1]]
	return s, nil
}

var releaseTag = regexp.MustCompile(`v?([0-9]+)\.([0-9]+)\.([0-9]+)`)

// For returns the catalog for a workload pinning image (empty: none): the
// catalog of the image's release when the tag names one (v0.13.0, or the
// same minor release), else the fallback.
func (s *Set) For(image string) *Catalog {
	if len(s.byLabel) == 1 || image == "" {
		return s.fallback
	}
	tag := image
	if i := strings.LastIndex(tag, ":"); i >= 0 && !strings.Contains(tag[i:], "/") {
		tag = tag[i+1:]
	}
	m := releaseTag.FindStringSubmatch(tag)
	if m == nil {
		return s.fallback
	}
	if c, ok := s.byLabel[fmt.Sprintf("v%s.%s.%s", m[1], m[2], m[3])]; ok {
		return c
	}
	for label, c := range s.byLabel {
		if l := releaseTag.FindStringSubmatch(label); l != nil && l[1] == m[1] && l[2] == m[2] {
			return c
		}
	}
	return s.fallback
}

// versionLess orders releases numerically and main-<date> snapshots after
// every release, by date.
func versionLess(a, b string) bool {
	am, bm := strings.HasPrefix(a, "main"), strings.HasPrefix(b, "main")
	if am != bm {
		return bm
	}
	if am {
		return a < b
	}
	pa, pb := releaseTag.FindStringSubmatch(a), releaseTag.FindStringSubmatch(b)
	if pa == nil || pb == nil {
		return a < b
	}
	for i := 1; i <= 3; i++ {
		x, y := atoi(pa[i]), atoi(pb[i])
		if x != y {
			return x < y
		}
	}
	return a < b
}

func atoi(s string) int {
	n := 0
	for _, r := range s {
		n = n*10 + int(r-'0')
	}
	return n
}
