package runner

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/wlcdev/wlc/internal/plan"
)

// Quote renders s as exactly one bash word that expands to s: unchanged
// when it holds nothing special, else single-quoted, else (for newlines and
// other non-printable bytes) $'...'. It is mvdan.cc/sh's syntax.Quote; the
// only string it refuses is one with a NUL byte, which no argv can carry.
func Quote(s string) (string, error) {
	q, err := syntax.Quote(s, syntax.LangBash)
	if err != nil {
		return "", fmt.Errorf("cannot pass %q to a shell: %v", s, err)
	}
	return q, nil
}

// Vars names the shell variables that stand for the plan's placeholders
// (plan.BaseURL, plan.ResultsDir, plan.DataDir) where a token is rendered.
type Vars struct {
	BaseURL    string
	ResultsDir string
	DataDir    string
}

// The variables a job script defines (see lib.sh).
var (
	// HostVars are for commands run beside the script (custom steps on
	// the host).
	HostVars = Vars{BaseURL: "WLC_BASE_URL", ResultsDir: "WLC_RESULTS_DIR"}
	// ServerVars are for the clients, which run where the server runs
	// (through wlc_in_server): they write into WLC_BENCH_DIR and keep
	// prepared datasets in WLC_DATA_DIR there.
	ServerVars = Vars{BaseURL: "WLC_BASE_URL", ResultsDir: "WLC_BENCH_DIR", DataDir: "WLC_DATA_DIR"}
	// NoVars renders every token literally (the server's own argv).
	NoVars = Vars{}
)

// Word renders one argv token as one bash word. Each placeholder that v
// names becomes a double-quoted reference ("${WLC_BASE_URL}"); every
// literal part is quoted on its own, so the word expands to exactly the
// token with the placeholder replaced and nothing else is ever expanded.
func Word(tok string, v Vars) (string, error) {
	var b strings.Builder
	rest := tok
	for rest != "" {
		i, ph, name := nextPlaceholder(rest, v)
		if i < 0 {
			break
		}
		if i > 0 {
			q, err := Quote(rest[:i])
			if err != nil {
				return "", err
			}
			b.WriteString(q)
		}
		b.WriteString(`"${` + name + `}"`)
		rest = rest[i+len(ph):]
	}
	if rest != "" || b.Len() == 0 {
		q, err := Quote(rest)
		if err != nil {
			return "", err
		}
		b.WriteString(q)
	}
	return b.String(), nil
}

func nextPlaceholder(s string, v Vars) (int, string, string) {
	best, ph, name := -1, "", ""
	for _, c := range []struct{ ph, name string }{{plan.BaseURL, v.BaseURL}, {plan.ResultsDir, v.ResultsDir}, {plan.DataDir, v.DataDir}} {
		if c.name == "" {
			continue
		}
		if i := strings.Index(s, c.ph); i >= 0 && (best < 0 || i < best) {
			best, ph, name = i, c.ph, c.name
		}
	}
	return best, ph, name
}

// Words renders every token with Word.
func Words(argv []string, v Vars) ([]string, error) {
	out := make([]string, len(argv))
	for i, a := range argv {
		w, err := Word(a, v)
		if err != nil {
			return nil, err
		}
		out[i] = w
	}
	return out, nil
}

// Assign renders NAME=value (for export or env), value quoted. name must
// be a valid variable name; the schema guarantees that for env names.
func Assign(name, value string, v Vars) (string, error) {
	if !validName(name) {
		return "", fmt.Errorf("invalid environment variable name %q", name)
	}
	w, err := Word(value, v)
	if err != nil {
		return "", err
	}
	return name + "=" + w, nil
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// Group splits rendered words into display lines: an option and the value
// that follows it share a line, everything else stands alone. It only
// affects layout; the words are not changed.
func Group(words []string) [][]string {
	var lines [][]string
	for i := 0; i < len(words); i++ {
		w := words[i]
		if strings.HasPrefix(w, "-") && i+1 < len(words) && !strings.HasPrefix(words[i+1], "-") {
			lines = append(lines, []string{w, words[i+1]})
			i++
			continue
		}
		lines = append(lines, []string{w})
	}
	return lines
}

// Continued joins lines into one command continued with backslashes; the
// first line is not indented, the others get indent.
func Continued(lines [][]string, indent string) string {
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteString(" \\\n" + indent)
		}
		b.WriteString(strings.Join(l, " "))
	}
	return b.String()
}

// Command renders head (the program and fixed words, already shell words)
// followed by argv rendered with v, one option per line.
func Command(head string, argv []string, v Vars, indent string) (string, error) {
	words, err := Words(argv, v)
	if err != nil {
		return "", err
	}
	return Continued(append([][]string{{head}}, Group(words)...), indent), nil
}
