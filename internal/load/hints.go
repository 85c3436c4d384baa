package load

// What fixes a finding: CUE's messages say what it expected, the
// loader's passes here add what the user should write (Load runs them
// over every finding, after the cascades are collapsed). Each reads the
// user's source at the finding's position, never CUE values.

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/literal"
	"cuelang.org/go/cue/scanner"
	"cuelang.org/go/cue/token"

	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/internal/diag/suggest"
)

// sources holds the files findings name, each read once, for the
// passes that look at what the user wrote there.
type sources struct {
	cwd   string
	files map[string]*source // nil: the file could not be read
}

// source is one file's bytes and lines.
type source struct {
	data  []byte
	lines []string
	// tree is the file parsed, once parsed is set (nil: it does not parse).
	tree   *ast.File
	parsed bool
}

func newSources(cwd string) *sources {
	return &sources{cwd: cwd, files: map[string]*source{}}
}

// file is the named file (as findings name files), or nil.
func (s *sources) file(name string) *source {
	if name == "" {
		return nil
	}
	f, ok := s.files[name]
	if !ok {
		if data, err := os.ReadFile(s.abs(name)); err == nil {
			f = &source{data: data, lines: strings.Split(string(data), "\n")}
		}
		s.files[name] = f
	}
	return f
}

// line is the line at d's position, split there (CUE's columns count
// bytes); "" and "" where d has no position in a readable file.
func (s *sources) line(d diag.Diagnostic) (before, at string) {
	if d.Line < 1 || d.Column < 1 {
		return "", ""
	}
	f := s.file(d.File)
	if f == nil || d.Line > len(f.lines) || d.Column-1 > len(f.lines[d.Line-1]) {
		return "", ""
	}
	line := f.lines[d.Line-1]
	return line[:d.Column-1], line[d.Column-1:]
}

// at is the rest of the line at d's position.
func (s *sources) at(d diag.Diagnostic) string {
	_, at := s.line(d)
	return at
}

// hints add what to write to one finding, in order, each returning its
// message; syntaxHints, which matches parse errors by file, runs on the
// sorted findings after them.
var hints = []func(d diag.Diagnostic, src *sources) string{
	quoteHint, bytesHint, meantHint, slurmTimeHint, emptyListHint, nameHint, boundHint,
}

// outOfBound is CUE's error for a value a bound of the schema refuses
// (`int & >=1`): "invalid value 0 (out of bound >=1)".
var outOfBound = regexp.MustCompile(`^invalid value (.+) \(out of bound (>=|<=|>|<|!=)(.+)\)$`)

// boundHint says the bound in words: the limit, then the value written.
func boundHint(d diag.Diagnostic, _ *sources) string {
	m := outOfBound.FindStringSubmatch(d.Message)
	if m == nil {
		return d.Message
	}
	v, bound := m[1], m[3]
	switch m[2] {
	case ">=":
		return fmt.Sprintf("must be at least %s, not %s", bound, v)
	case ">":
		return fmt.Sprintf("must be greater than %s, not %s", bound, v)
	case "<=":
		return fmt.Sprintf("must be at most %s, not %s", bound, v)
	case "<":
		return fmt.Sprintf("must be less than %s, not %s", bound, v)
	}
	if bound == `""` {
		return "must not be empty: give a value, or leave the field out"
	}
	return fmt.Sprintf("must not be %s", bound)
}

// nameHint says the schema's pattern for a name (a config's, a task's) in
// words.
func nameHint(d diag.Diagnostic, _ *sources) string {
	v, ok := strings.CutSuffix(d.Message, ` (out of bound =~"^[A-Za-z0-9][A-Za-z0-9_.-]*$")`)
	if v, found := strings.CutPrefix(v, "invalid value "); ok && found {
		return "a name here starts with a letter or digit and uses only letters, digits, _, . and -, not " + v
	}
	return d.Message
}

// fieldLabel is a field's label and colon at the start of a line's rest.
var fieldLabel = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*[!?]?:\s*`)

// shortList is CUE's error for a list shorter than its type's minimum.
var shortList = regexp.MustCompile(`^incompatible list lengths \(0 and (\d+)\)$`)

// emptyListHint says what CUE's "incompatible list lengths (0 and 1)"
// means where the user wrote an empty list.
func emptyListHint(d diag.Diagnostic, src *sources) string {
	m := shortList.FindStringSubmatch(d.Message)
	// CUE places it at the field's label or at the list.
	at := fieldLabel.ReplaceAllString(src.at(d), "")
	if m == nil || !strings.HasPrefix(strings.Join(strings.Fields(at), ""), "[]") {
		return d.Message
	}
	n := "one value"
	if m[1] != "1" {
		n = m[1] + " values"
	}
	return fmt.Sprintf("must not be an empty list: give at least %s", n)
}

// unresolved is CUE's error for an identifier no scope declares.
var unresolved = regexp.MustCompile(`^reference "([^"]+)" not found$`)

// quoteHint says what fixes a reference to nothing: a plain name written
// as a field's value or a list's element is nearly always a string
// without its quotes (`precision: bf16`), which CUE reads as a reference;
// anything else (a helper, a definition, an import) is a name misspelled
// or not declared.
func quoteHint(d diag.Diagnostic, src *sources) string {
	m := unresolved.FindStringSubmatch(d.Message)
	if m == nil {
		return d.Message
	}
	before, _ := src.line(d)
	before = strings.TrimRight(before, " \t")
	if !strings.HasPrefix(m[1], "_") && !strings.HasPrefix(m[1], "#") && before != "" && strings.ContainsAny(before[len(before)-1:], ":[,") {
		return fmt.Sprintf("%s; a string needs quotes: %q (or declare %s in the package)", d.Message, m[1], m[1])
	}
	if h := helperScopeHint(d, m[1], src); h != "" {
		return h
	}
	return fmt.Sprintf("%s: no file of the package declares %s; check its spelling", d.Message, m[1])
}

// bytesHint says what fixes a value written in single quotes, which CUE
// reads as bytes, not a string: its error ("must be a string, not the
// bytes 'x'", or a constraint's own message such as "precision must be
// one of bf16, ...", which reads as if bf16 were refused) gains the fix.
func bytesHint(d diag.Diagnostic, src *sources) string {
	if d.Severity != diag.Error {
		return d.Message
	}
	at := src.at(d)
	if !strings.HasPrefix(at, "'") {
		return d.Message
	}
	fix := "a string in double quotes"
	if end := strings.Index(at[1:], "'"); end > 0 && !strings.ContainsAny(at[1:end+1], `"\`) {
		fix = `"` + at[1:end+1] + `"`
	}
	return d.Message + "; single quotes make bytes in CUE: write " + fix
}

// closedSets finds the values a closed set's message lists ("must be one
// of a, b", "use one of a, b", "known profiles: A, B").
var closedSets = regexp.MustCompile(`(?:must be one of|use one of|known profiles:) ([A-Za-z0-9_.\-]+(?:, [A-Za-z0-9_.\-]+)+)`)

// meantHint adds "did you mean …?" to an error refusing a string not in a
// closed set the message lists, with the values it likely meant
// (suggest.Values: h200 for H200, nvfp4 or mxfp4 for fp4).
func meantHint(d diag.Diagnostic, src *sources) string {
	m := closedSets.FindStringSubmatch(d.Message)
	if m == nil || d.Severity != diag.Error || strings.Contains(d.Message, "did you mean") {
		return d.Message
	}
	v, ok := stringAt(src.at(d))
	if !ok {
		return d.Message
	}
	meant := suggest.Values(strings.Split(m[1], ", "), v)
	if len(meant) == 0 {
		return d.Message
	}
	if last := len(meant) - 1; last > 0 {
		meant = []string{strings.Join(meant[:last], ", "), meant[last]}
	}
	return d.Message + "; did you mean " + strings.Join(meant, " or ") + "?"
}

// stringAt is the double-quoted string literal src starts with.
func stringAt(src string) (string, bool) {
	if !strings.HasPrefix(src, `"`) || strings.HasPrefix(src, `"""`) {
		return "", false
	}
	for i := 1; i < len(src); i++ {
		switch src[i] {
		case '\\':
			i++
		case '"':
			s, err := literal.Unquote(src[:i+1])
			return s, err == nil
		}
	}
	return "", false
}

// slurmTimeHint says which Slurm time a time_limit written as a duration
// (2h, 90m, 1h30m) meant: Slurm reads none of those.
func slurmTimeHint(d diag.Diagnostic, src *sources) string {
	if d.Severity != diag.Error || !strings.HasPrefix(d.Message, "time_limit must be ") {
		return d.Message
	}
	v, ok := stringAt(src.at(d))
	if !ok {
		return d.Message
	}
	dur, err := time.ParseDuration(strings.ReplaceAll(v, " ", ""))
	if err != nil || dur <= 0 || dur%time.Second != 0 {
		return d.Message
	}
	secs := int64(dur / time.Second)
	t := fmt.Sprintf("%02d:%02d:%02d", secs/3600%24, secs/60%60, secs%60)
	if days := secs / 86400; days > 0 {
		t = fmt.Sprintf("%d-%s", days, t)
	}
	return d.Message + fmt.Sprintf("; %s is %q in Slurm's form", v, t)
}

// syntaxHints says what fixes CUE's parse errors, which say only what the
// parser expected. Brackets are matched over the file's tokens: in a file
// whose brackets do not balance, its last parse error names the bracket
// left open (or closed by the wrong one); in a file whose brackets
// balance, "expected '}', found 'EOF'" after an earlier error is the
// parser's recovery running to the end of the file, not a second mistake,
// and is dropped. A parse error is a finding without a path.
func syntaxHints(in diag.List, src *sources) diag.List {
	type fileState struct {
		last    int    // index in out of the file's last parse error
		bracket string // what is wrong with its brackets; "" when they balance
	}
	files := map[string]*fileState{}
	var out diag.List
	for _, d := range in {
		if d.Path != "" || d.File == "" || d.Severity != diag.Error || d.Line < 1 {
			out = append(out, d)
			continue
		}
		fs := files[d.File]
		if fs == nil {
			f := src.file(d.File)
			if f == nil {
				out = append(out, d)
				continue
			}
			fs = &fileState{last: -1, bracket: unbalanced(d.File, f.data)}
			files[d.File] = fs
		}
		if fs.last >= 0 && fs.bracket == "" && strings.HasSuffix(d.Message, "found 'EOF'") {
			continue // the recovery from the file's earlier error
		}
		if hint := parseHint(d.Message); hint != "" {
			d.Message += "; " + hint
		}
		fs.last = len(out)
		out = append(out, d)
	}
	for _, fs := range files {
		if fs.last >= 0 && fs.bracket != "" {
			out[fs.last].Message += " (" + fs.bracket + ")"
		}
	}
	return out
}

// parseHint is what fixes the mistake behind one of the parser's
// messages, or "".
func parseHint(msg string) string {
	switch {
	case msg == "string literal not terminated":
		return `close the string with " on the same line (text of several lines goes between lines of """)`
	case strings.HasPrefix(msg, "missing ',' in struct literal"):
		return "put each field on a line of its own or separate them with commas (a value with spaces needs quotes)"
	case strings.HasPrefix(msg, "missing ',' in list literal"):
		return "separate a list's elements with commas: [a, b]; a struct is written {name: value}"
	case strings.HasPrefix(msg, "expected label or ':'"):
		return "a field is written name: value"
	case msg == "expected operand, found ','":
		return "a value is missing before the comma: write it or remove the comma"
	}
	return ""
}

var closerOf = map[token.Token]token.Token{token.LBRACE: token.RBRACE, token.LBRACK: token.RBRACK, token.LPAREN: token.RPAREN}

// unbalanced describes the first bracket of src (a CUE file) that is not
// closed, or closed by the wrong kind, with its position; "" when every
// bracket is closed by its own kind. Of several brackets left open, the
// one named is where the file's indentation first disagrees: a closer
// that starts a line is indented as the line of its opener, so a closer
// indented otherwise closes an outer bracket and the one it met was left
// open (else the innermost).
func unbalanced(file string, src []byte) string {
	type open struct {
		tok       token.Token
		line, col int
	}
	lines := strings.Split(string(src), "\n")
	indent := func(line int) string {
		l := lines[line-1]
		return l[:len(l)-len(strings.TrimLeft(l, " \t"))]
	}
	var s scanner.Scanner
	s.Init(token.NewFile(file, -1, len(src)), src, nil, 0)
	var stack []open
	var suspect *open
	prevLine := 0
	for {
		pos, tok, _ := s.Scan()
		first := pos.Line() != prevLine // the first token of its line
		prevLine = pos.Line()
		switch tok {
		case token.EOF:
			if len(stack) == 0 {
				return ""
			}
			o := stack[len(stack)-1]
			if suspect != nil {
				o = *suspect
			}
			return fmt.Sprintf("the %s at %d:%d is never closed: add its %s", o.tok, o.line, o.col, closerOf[o.tok])
		case token.LBRACE, token.LBRACK, token.LPAREN:
			stack = append(stack, open{tok, pos.Line(), pos.Column()})
		case token.RBRACE, token.RBRACK, token.RPAREN:
			if len(stack) == 0 {
				return fmt.Sprintf("the %s at %d:%d closes nothing: remove it", tok, pos.Line(), pos.Column())
			}
			o := stack[len(stack)-1]
			if closerOf[o.tok] != tok {
				return fmt.Sprintf("the %s at %d:%d is closed by the %s at %d:%d: close it with %s first", o.tok, o.line, o.col, tok, pos.Line(), pos.Column(), closerOf[o.tok])
			}
			if suspect == nil && first && o.line != pos.Line() && indent(o.line) != indent(pos.Line()) {
				suspect = &o
			}
			stack = stack[:len(stack)-1]
		}
	}
}
