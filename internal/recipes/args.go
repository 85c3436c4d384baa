package recipes

import (
	"encoding/json"
	"github.com/wlcdev/wlc/internal/engine/cmdline"
	"reflect"
	"strings"
)

// Arg is one flag unit of a vllm serve command: a flag and its value (if
// the next token is not a flag), with where it came from.
type Arg struct {
	// Flag is the flag as written, without an `=value` part.
	Flag string
	// Value is the value; HasValue is false for bare boolean flags.
	Value    string
	HasValue bool
	// Eq is true when the unit was written as one `--flag=value` token.
	Eq bool
	// Source names the recipe layer (e.g. "variant nvfp4 extra_args").
	Source string
	Pos    Pos
}

// Key is the flag's canonical identity the way vLLM's argument parser
// sees it (cmdline.VLLMServe): aliases and abbreviations expanded,
// underscores in the name before the first dot read as dashes
// (--max_num_seqs ≡ --max-num-seqs; the dotted sub-keys of a JSON config
// flag keep theirs), and --no-x the negation of --x.
func (a Arg) Key() string {
	k, _ := canonical(a.Flag)
	return k
}

func canonical(flag string) (key string, negated bool) {
	m, _ := cmdline.VLLMServe.Resolve(flag)
	m.Negated, negated = false, m.Negated
	return m.Canonical(), negated
}

// effective is the value vLLM would read: a bare flag is "true", a bare
// --no-x is "false".
func (a Arg) effective() string {
	_, neg := canonical(a.Flag)
	switch {
	case a.HasValue:
		return a.Value
	case neg:
		return "false"
	}
	return "true"
}

// Canonical renders the unit with its canonical spelling.
func (a Arg) Canonical() []string {
	k, neg := canonical(a.Flag)
	if neg {
		k = "--no-" + strings.TrimPrefix(k, "--")
	}
	if a.HasValue {
		return []string{k, a.Value}
	}
	return []string{k}
}

// Tokens renders the unit as written.
func (a Arg) Tokens() []string {
	switch {
	case a.Eq:
		return []string{a.Flag + "=" + a.Value}
	case a.HasValue:
		return []string{a.Flag, a.Value}
	}
	return []string{a.Flag}
}

// Group splits argv tokens into flag units the way vLLM's parser reads
// them (cmdline.VLLMServe.Parse: a switch takes no value); a token that
// follows no option becomes a unit of its own (a positional). pos are the
// tokens' positions, source names where they come from.
func Group(toks []string, pos []Pos, source string) []Arg {
	var out []Arg
	for _, u := range cmdline.VLLMServe.Parse(toks).Units {
		a := Arg{Flag: toks[u.Start], Source: source, Value: u.Arg, HasValue: u.HasArg}
		if u.Start < len(pos) {
			a.Pos = pos[u.Start]
		}
		if u.Match.HasValue {
			// --flag=value, or -n2: one token
			tok := toks[u.Start]
			a.Flag = tok[:len(tok)-len(u.Match.Value)]
			if a.Eq = strings.HasSuffix(a.Flag, "="); a.Eq {
				a.Flag = strings.TrimSuffix(a.Flag, "=")
			}
		}
		out = append(out, a)
	}
	return out
}

// sameValue compares two values, JSON documents by content.
func sameValue(a, b string) bool {
	if a == b {
		return true
	}
	var x, y any
	if json.Unmarshal([]byte(a), &x) == nil && json.Unmarshal([]byte(b), &y) == nil {
		return reflect.DeepEqual(x, y)
	}
	return false
}

// Conflict is one flag set more than once with different values; the last
// unit wins (the site's rule), the others are reported, not dropped
// silently.
type Conflict struct {
	Key   string
	Units []Arg
}

// dedupe keeps the last unit of each canonical flag in its own position,
// the way the site's dedupeArgs does, but by canonical key instead of by
// spelling. It returns the conflicts it resolved.
func dedupe(in []Arg) ([]Arg, []Conflict) {
	last := map[string]int{}
	for i, a := range in {
		if cmdline.IsOption(a.Flag) {
			last[a.Key()] = i
		}
	}
	var out []Arg
	var conflicts []Conflict
	seen := map[string]bool{}
	for i, a := range in {
		if !cmdline.IsOption(a.Flag) {
			out = append(out, a)
			continue
		}
		k := a.Key()
		if last[k] == i {
			out = append(out, a)
		}
		if seen[k] {
			continue
		}
		seen[k] = true
		var units []Arg
		differ := false
		for _, b := range in[i:] {
			if cmdline.IsOption(b.Flag) && b.Key() == k {
				if len(units) > 0 && !sameValue(units[0].effective(), b.effective()) {
					differ = true
				}
				units = append(units, b)
			}
		}
		if differ {
			conflicts = append(conflicts, Conflict{Key: k, Units: units})
		}
	}
	return out, conflicts
}

// shellQuote quotes a token for bash unless it is plain or a bare $VAR.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	plain := true
	for _, r := range s {
		if !(r == '-' || r == '_' || r == '.' || r == '/' || r == ':' || r == '=' || r == ',' || r == '+' || r == '@' ||
			(r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	if strings.HasPrefix(s, "$") && isEnvName(s[1:]) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func isEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == '_' || (r >= 'A' && r <= 'Z') || (r >= 'a' && r <= 'z') || (i > 0 && r >= '0' && r <= '9') {
			continue
		}
		return false
	}
	return true
}
