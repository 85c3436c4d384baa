// Package suggest finds what a misspelt name most likely meant, for the
// "did you mean …?" in wlc's messages (fields, flags, workloads).
package suggest

import (
	"sort"
	"strconv"
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

// Values returns the values of a closed set (cands, in their order) a
// wrong value v most likely meant, or nil: the one that differs only in
// case (h200 for H200), else the few (at most three) that hold v (fp4 in
// nvfp4 and mxfp4), else the only one a single edit away. Unlike Closest
// it never guesses between near names: a short value is near too many
// (fp4 is one edit from fp8, which it does not mean); and another number
// or initial is another thing, not a typo (H20 and H100 are GPUs, not
// H200 misspelt).
func Values(cands []string, v string) []string {
	lv := strings.ToLower(v)
	if lv == "" {
		return nil
	}
	for _, c := range cands {
		if strings.ToLower(c) == lv {
			if c == v {
				return nil // v is a value of the set
			}
			return []string{c}
		}
	}
	for _, c := range cands {
		if abbreviates(strings.ToLower(c), lv) {
			return []string{c} // kubernetes for k8s
		}
	}
	var holding []string
	for _, c := range cands {
		if len(lv) >= 2 && strings.Contains(strings.ToLower(c), lv) && (digits(v) == "" || digits(c) == digits(v)) {
			holding = append(holding, c)
		}
	}
	if len(holding) > 0 && len(holding) <= 3 {
		return holding
	}
	var near []string
	for _, c := range cands {
		// Not across numbers or initials: H100 and B300 are one edit
		// from H200 and H300, and other GPUs.
		lc := strings.ToLower(c)
		if len([]rune(lv)) >= 3 && Distance(lc, lv) == 1 && digits(c) == digits(v) && lc[0] == lv[0] {
			near = append(near, c)
		}
	}
	if len(near) == 1 {
		return near
	}
	return nil
}

// abbreviates reports whether c is a numeronym of v: v's first letter,
// the count of the letters between, its last letter (k8s, kubernetes).
func abbreviates(c, v string) bool {
	if len(c) < 3 || len(v) < 4 || c[0] != v[0] || c[len(c)-1] != v[len(v)-1] {
		return false
	}
	n, err := strconv.Atoi(c[1 : len(c)-1])
	return err == nil && n == len(v)-2
}

// digits are the digits of s, in order.
func digits(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
}
