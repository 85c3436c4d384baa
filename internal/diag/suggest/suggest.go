// Package suggest finds what a misspelt name most likely meant, for the
// "did you mean …?" in wlc's messages (fields, flags, workloads).
package suggest

import (
	"sort"
	"strings"
)

// Distance is the Levenshtein edit distance between a and b, in runes.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// Closest returns the candidate name most likely meant, or "": one that
// reads the same (see Skeleton), else the nearest by edit distance when it is within a third of the name's length
// (a typo), else the shortest candidate holding every word of name in
// order (a shortened spelling: num_tokens for num_speculative_tokens,
// fewshot for num_fewshot). Ties go to the first in sorted order.
func Closest(cands []string, name string) string {
	sorted := append([]string(nil), cands...)
	sort.Strings(sorted)
	// A look-alike spelling (Н200 with a Cyrillic Н) is that name.
	if sk := Skeleton(name); sk != name {
		for _, c := range sorted {
			if Skeleton(c) == sk {
				return c
			}
		}
	}
	best, bestD := "", len([]rune(name))/3+2
	for _, c := range sorted {
		if d := Distance(c, name); d < bestD {
			best, bestD = c, d
		}
	}
	if best != "" || len(name) < 4 {
		return best
	}
	for _, c := range sorted {
		if c != name && containsWords(c, name) && (best == "" || len(c) < len(best)) {
			best = c
		}
	}
	return best
}

// containsWords reports whether every _- or --separated word of name
// occurs in c, in order.
func containsWords(c, name string) bool {
	words := strings.FieldsFunc(name, func(r rune) bool { return r == '_' || r == '-' })
	if len(words) == 0 {
		return false
	}
	rest := c
	for _, w := range words {
		i := strings.Index(rest, w)
		if i < 0 {
			return false
		}
		rest = rest[i+len(w):]
	}
	return true
}
