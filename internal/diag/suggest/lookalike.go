package suggest

import (
	"fmt"
	"strings"
	"unicode"
)

// lookalikes maps letters of other scripts to the ASCII character they are
// drawn like in common fonts (the Latin-lookalike part of Unicode's
// confusables.txt, UTS #39): a name typed or pasted with one of them is
// not the name it shows, and no message quoting both would show why.
var lookalikes = map[rune]rune{
	// Cyrillic capitals and small letters.
	'А': 'A', 'В': 'B', 'С': 'C', 'Е': 'E', 'Н': 'H', 'І': 'I', 'Ј': 'J', 'К': 'K', 'М': 'M',
	'О': 'O', 'Р': 'P', 'Ѕ': 'S', 'Т': 'T', 'Х': 'X', 'У': 'Y', 'Ԛ': 'Q', 'Ԝ': 'W',
	'а': 'a', 'с': 'c', 'е': 'e', 'һ': 'h', 'і': 'i', 'ј': 'j', 'о': 'o', 'р': 'p',
	'ѕ': 's', 'х': 'x', 'у': 'y', 'ԁ': 'd', 'ԛ': 'q', 'ԝ': 'w', 'ӏ': 'l',
	// Greek.
	'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M',
	'Ν': 'N', 'Ο': 'O', 'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X', 'ο': 'o', 'ν': 'v',
	'α': 'a', 'ι': 'i', 'κ': 'k', 'ρ': 'p', 'υ': 'u',
	// Armenian, Latin small capitals and a few signs.
	'օ': 'o', 'ս': 'u', 'ց': 'g', 'հ': 'h', 'ո': 'n', 'ɡ': 'g', 'ı': 'i',
	'ꓲ': 'I', 'ǀ': 'l', '‐': '-', '‑': '-', '‒': '-', '–': '-', '−': '-',
	'⁄': '/', '∕': '/',
}

// Skeleton is s with every look-alike replaced by the ASCII character it
// is drawn like, and fullwidth forms (Ｈ２００) by their ASCII: two names
// with one skeleton read the same.
func Skeleton(s string) string {
	return strings.Map(func(r rune) rune {
		if a, ok := lookalikes[r]; ok {
			return a
		}
		if r >= '！' && r <= '～' { // fullwidth ASCII
			return r - '！' + '!'
		}
		return r
	}, s)
}

// Lookalikes explains the words of msg drawn like ASCII words but holding
// other characters (Н200 with a Cyrillic Н, Ｈ２００ in fullwidth), each
// once, as a sentence to append to msg; "" when there are none. A word
// with any character not drawn like ASCII (a Russian word) is left alone:
// it does not pass for an ASCII one.
func Lookalikes(msg string) string {
	var parts []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(msg, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(`"'`+"`"+`,;:()[]{}`, r)
	}) {
		w = strings.TrimRight(w, ".?!")
		sk := Skeleton(w)
		// A lone letter is no name (and is how the hint names one); a
		// word with no letter is none either (2–8 with an en dash), and a
		// dash look-alike matters only in a flag.
		oddLetter := strings.ContainsFunc(w, func(r rune) bool {
			return r > unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r))
		})
		if seen[w] || sk == w || !ascii(sk) || len([]rune(w)) < 2 || !strings.ContainsFunc(sk, unicode.IsLetter) ||
			!oddLetter && !strings.HasPrefix(sk, "-") {
			continue
		}
		seen[w] = true
		var odd []string
		done := map[rune]bool{}
		for _, r := range w {
			if r > unicode.MaxASCII && !done[r] {
				done[r] = true
				odd = append(odd, fmt.Sprintf("%c is %U (%s), not the ASCII %s", r, r, script(r), Skeleton(string(r))))
			}
		}
		parts = append(parts, fmt.Sprintf("%s only looks like %s: its %s", w, sk, strings.Join(odd, ", its ")))
	}
	if len(parts) == 0 {
		return ""
	}
	return "(" + strings.Join(parts, "; ") + "; retype it)"
}

func ascii(s string) bool {
	for _, r := range s {
		if r > unicode.MaxASCII {
			return false
		}
	}
	return true
}

func script(r rune) string {
	if r >= '！' && r <= '～' {
		return "fullwidth"
	}
	for _, s := range []struct {
		name  string
		table *unicode.RangeTable
	}{{"Cyrillic", unicode.Cyrillic}, {"Greek", unicode.Greek}, {"Armenian", unicode.Armenian}, {"Latin", unicode.Latin}} {
		if unicode.Is(s.table, r) {
			return s.name
		}
	}
	return "punctuation"
}
