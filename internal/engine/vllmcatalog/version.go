package vllmcatalog

import (
	"regexp"
	"strconv"
	"strings"
)

// releaseTag matches a vLLM release version anywhere in a label or tag.
var releaseTag = regexp.MustCompile(`^v?([0-9]+)\.([0-9]+)\.([0-9]+)`)

// ReleaseOf returns the release version (v0.13.0) an image tag names, and
// whether it names one: v0.13.0, 0.13.0-cu130 and v0.11.0rc1 do;
// nightly, nightly-<sha> and latest do not.
func ReleaseOf(tag string) (string, bool) {
	m := releaseTag.FindStringSubmatch(tag)
	if m == nil {
		return "", false
	}
	return "v" + m[1] + "." + m[2] + "." + m[3], true
}

// Less orders catalog labels: releases numerically, then main-<date>
// snapshots by date, then any other label (a team's) by name.
func Less(a, b string) bool {
	ra, rb := rank(a), rank(b)
	if ra != rb {
		return ra < rb
	}
	if ra == 0 {
		pa, pb := releaseTag.FindStringSubmatch(a), releaseTag.FindStringSubmatch(b)
		for i := 1; i <= 3; i++ {
			x, _ := strconv.Atoi(pa[i])
			y, _ := strconv.Atoi(pb[i])
			if x != y {
				return x < y
			}
		}
	}
	return a < b
}

func rank(label string) int {
	switch {
	case releaseTag.MatchString(label):
		return 0
	case strings.HasPrefix(label, "main-"):
		return 1
	}
	return 2
}
