package recipes

import (
	"encoding/json"
	"reflect"
	"strconv"
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

// shortFlags are vLLM's single-dash aliases.
var shortFlags = map[string]string{
	"tp":  "tensor-parallel-size",
	"pp":  "pipeline-parallel-size",
	"dp":  "data-parallel-size",
	"dpl": "data-parallel-size-local",
	"cc":  "compilation-config",
	"q":   "quantization",
}

// Key is the flag's canonical identity the way vLLM's argument parser
// sees it: single-dash aliases expanded, underscores in the name before
// the first dot read as dashes (--max_num_seqs ≡ --max-num-seqs; the
// dotted sub-keys of a JSON config flag keep theirs), and --no-x the
// negation of --x.
func (a Arg) Key() string {
	k, _ := canonical(a.Flag)
	return k
}

func canonical(flag string) (key string, negated bool) {
	name := strings.TrimLeft(flag, "-")
	if !strings.HasPrefix(flag, "--") {
		head, rest, _ := strings.Cut(name, ".")
		if long, ok := shortFlags[head]; ok {
			name = long
			if rest != "" {
				name += "." + rest
			}
		}
	}
	head, rest, dotted := strings.Cut(name, ".")
	head = strings.ReplaceAll(head, "_", "-")
	if strings.HasPrefix(head, "no-") {
		head, negated = strings.TrimPrefix(head, "no-"), true
	}
	if dotted {
		head += "." + rest
	}
	return "--" + head, negated
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

func isFlag(tok string) bool {
	if !strings.HasPrefix(tok, "-") || tok == "-" {
		return false
	}
	if _, err := strconv.ParseFloat(tok, 64); err == nil {
		return false // a negative number is a value
	}
	return true
}

// group splits argv tokens into flag units; a token that is not a flag and
// follows no flag becomes a unit of its own (a positional).
func group(toks []string, pos []Pos, source string) []Arg {
	var out []Arg
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		a := Arg{Flag: t, Source: source}
		if i < len(pos) {
			a.Pos = pos[i]
		}
		if isFlag(t) && strings.Contains(t, "=") {
			a.Flag, a.Value, _ = strings.Cut(t, "=")
			a.HasValue, a.Eq = true, true
		} else if isFlag(t) && i+1 < len(toks) && !isFlag(toks[i+1]) {
			a.Value, a.HasValue = toks[i+1], true
			i++
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
		if isFlag(a.Flag) {
			last[a.Key()] = i
		}
	}
	var out []Arg
	var conflicts []Conflict
	seen := map[string]bool{}
	for i, a := range in {
		if !isFlag(a.Flag) {
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
			if isFlag(b.Flag) && b.Key() == k {
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
