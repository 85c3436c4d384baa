package buildkite

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/buildkite/go-pipeline"
	"github.com/buildkite/go-pipeline/ordered"
	"gopkg.in/yaml.v3"

	"github.com/wlcdev/wlc/internal/par"
)

// The pipeline YAML is written directly rather than through yaml.v3's
// reflection and emitter, which cost ~2.7 s of a 1,000-step export (issue
// 14). The writer produces yaml.v3's bytes (SetIndent(2)) for the shapes
// this package builds: it follows yaml.v3's field and key order, its
// indentation, its literal blocks, and asks yaml.v3 itself how to write
// any scalar that is not plainly safe (once per distinct string). Anything
// else (a step type or field this package never builds, a list inside a
// list, a multi-line value that is not a literal block) is errSlowPath, and
// encode falls back to yaml.v3 for the whole pipeline. emit_test.go holds
// the writer to yaml.v3's bytes.

// errSlowPath says the writer does not handle a value; yaml.v3 writes the
// pipeline instead.
var errSlowPath = errors.New("not written directly")

type yamlWriter struct {
	b []byte
	// scalars caches how yaml.v3 writes a string scalar on one line.
	scalars map[string]string
}

func newYAMLWriter(size int) *yamlWriter {
	return &yamlWriter{b: make([]byte, 0, size), scalars: map[string]string{}}
}

// pipeline writes p after header as yaml.v3 would: steps, then env.
func (w *yamlWriter) pipeline(header string, p *pipeline.Pipeline) error {
	if len(p.Secrets) > 0 || p.Checkout != nil || len(p.RemainingFields) > 0 || len(p.Steps) == 0 {
		return errSlowPath
	}
	w.b = append(w.b, header...)
	w.b = append(w.b, "steps:\n"...)
	// A step's bytes depend on the step alone: each is written on every
	// CPU by a writer of the goroutine's own (its scalar cache is not
	// shared), then joined in order. One upload of 1,000 steps took ~60 ms
	// on one CPU at the end of an export.
	steps := make([][]byte, len(p.Steps))
	errs := make([]error, len(p.Steps))
	par.DoWith(len(p.Steps), func() *yamlWriter { return newYAMLWriter(64 << 10) }, func(sw *yamlWriter, i int) {
		cs, ok := p.Steps[i].(*pipeline.CommandStep)
		if !ok {
			errs[i] = errSlowPath
			return
		}
		sw.b = sw.b[:0]
		errs[i] = sw.step(cs)
		steps[i] = bytes.Clone(sw.b)
	})
	for i, b := range steps {
		if errs[i] != nil {
			return errs[i]
		}
		w.b = append(w.b, b...)
	}
	if p.Env != nil && p.Env.Len() > 0 {
		w.b = append(w.b, "env:\n"...)
		if err := p.Env.Range(func(k, v string) error { return w.entry(2, k, v) }); err != nil {
			return err
		}
	}
	return nil
}

// step writes one command step as a sequence item at indent 2: the typed
// fields in go-pipeline's declaration order, then the inline remaining
// fields in yaml.v3's key order.
func (w *yamlWriter) step(s *pipeline.CommandStep) error {
	if s.Secrets != nil || s.Signature != nil || s.Matrix != nil || s.Cache != nil || s.Checkout != nil {
		return errSlowPath
	}
	w.b = append(w.b, "  - "...)
	const ind = 4
	first := true
	field := func(k string, v any) error {
		if !first {
			w.indent(ind)
		}
		first = false
		return w.keyValue(ind, k, v)
	}
	if s.Key != "" {
		if err := field("key", s.Key); err != nil {
			return err
		}
	}
	if s.Label != "" {
		if err := field("label", s.Label); err != nil {
			return err
		}
	}
	if err := field("command", s.Command); err != nil {
		return err
	}
	if len(s.Plugins) > 0 {
		ps := make([]any, len(s.Plugins))
		for i, p := range s.Plugins {
			v, _ := p.MarshalYAML() // never fails (go-pipeline's doc)
			ps[i] = v
		}
		if err := field("plugins", ps); err != nil {
			return err
		}
	}
	if len(s.Env) > 0 {
		if err := field("env", s.Env); err != nil {
			return err
		}
	}
	for _, k := range sortedKeys(s.RemainingFields) {
		switch k {
		case "key", "label", "command", "plugins", "secrets", "env", "signature", "matrix", "cache", "checkout":
			return errSlowPath // yaml.v3 refuses these; let it say so
		}
		if err := field(k, s.RemainingFields[k]); err != nil {
			return err
		}
	}
	return nil
}

const spaces = "                                                                "

func (w *yamlWriter) indent(n int) {
	for n > len(spaces) {
		w.b = append(w.b, spaces...)
		n -= len(spaces)
	}
	w.b = append(w.b, spaces[:n]...)
}

// entry writes `k: v` at column ind, on its own line.
func (w *yamlWriter) entry(ind int, k string, v any) error {
	w.indent(ind)
	return w.keyValue(ind, k, v)
}

// keyValue writes `k: v` where the cursor is (column ind) and ends the
// line; a non-empty collection starts on the next line, indented by 2.
func (w *yamlWriter) keyValue(ind int, k string, v any) error {
	if err := w.key(k); err != nil {
		return err
	}
	w.b = append(w.b, ':')
	if isCollection(v) {
		w.b = append(w.b, '\n')
		return w.collection(ind+2, v)
	}
	w.b = append(w.b, ' ')
	return w.scalar(ind, v)
}

// isCollection reports whether v is a non-empty mapping or sequence (empty
// ones are written in flow style, `{}` and `[]`, as yaml.v3 does).
func isCollection(v any) bool {
	switch x := v.(type) {
	case []any:
		return len(x) > 0
	case []string:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	case map[string]string:
		return len(x) > 0
	case *ordered.Map[string, any]:
		return x != nil && x.Len() > 0
	}
	return false
}

// collection writes a non-empty mapping or sequence in block style with
// its entries at column ind.
func (w *yamlWriter) collection(ind int, v any) error {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if err := w.item(ind, e); err != nil {
				return err
			}
		}
	case []string:
		for _, e := range x {
			if err := w.item(ind, e); err != nil {
				return err
			}
		}
	case map[string]any:
		for _, k := range sortedKeys(x) {
			if err := w.entry(ind, k, x[k]); err != nil {
				return err
			}
		}
	case map[string]string:
		for _, k := range sortedKeys(x) {
			if err := w.entry(ind, k, x[k]); err != nil {
				return err
			}
		}
	case *ordered.Map[string, any]:
		return x.Range(func(k string, e any) error { return w.entry(ind, k, e) })
	default:
		return errSlowPath
	}
	return nil
}

// item writes one sequence item at column ind: `- scalar`, or a mapping
// whose first entry shares the dash's line.
func (w *yamlWriter) item(ind int, e any) error {
	w.indent(ind)
	w.b = append(w.b, "- "...)
	if !isCollection(e) {
		return w.scalar(ind, e) // a literal block indents past the dash
	}
	first := true
	entry := func(k string, v any) error {
		if !first {
			w.indent(ind + 2)
		}
		first = false
		return w.keyValue(ind+2, k, v)
	}
	switch x := e.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			if err := entry(k, x[k]); err != nil {
				return err
			}
		}
	case map[string]string:
		for _, k := range sortedKeys(x) {
			if err := entry(k, x[k]); err != nil {
				return err
			}
		}
	case *ordered.Map[string, any]:
		return x.Range(entry)
	default:
		return errSlowPath // a sequence inside a sequence
	}
	return nil
}

// key writes a mapping key; a key yaml.v3 would not write as a plain
// one-line scalar (empty, quoted, multi-line) takes the slow path.
func (w *yamlWriter) key(k string) error {
	if !plainSafe(k) {
		q, err := w.oneLine(k)
		if err != nil || q != k {
			return errSlowPath
		}
	}
	w.b = append(w.b, k...)
	return nil
}

// scalar writes a scalar value at the cursor (its key or dash at column
// ind) and ends the line.
func (w *yamlWriter) scalar(ind int, v any) error {
	switch x := v.(type) {
	case string:
		if strings.IndexByte(x, '\n') >= 0 {
			return w.literal(ind, x)
		}
		if plainSafe(x) {
			w.b = append(w.b, x...)
		} else {
			q, err := w.oneLine(x)
			if err != nil {
				return err
			}
			w.b = append(w.b, q...)
		}
	case int:
		w.b = strconv.AppendInt(w.b, int64(x), 10)
	case bool:
		w.b = strconv.AppendBool(w.b, x)
	case nil:
		w.b = append(w.b, "null"...)
	case []any, []string, map[string]any, map[string]string, *ordered.Map[string, any]:
		if isCollection(v) {
			return errSlowPath
		}
		if _, ok := v.([]any); ok {
			w.b = append(w.b, "[]"...)
		} else if _, ok := v.([]string); ok {
			w.b = append(w.b, "[]"...)
		} else {
			w.b = append(w.b, "{}"...)
		}
	default:
		// Floats and anything decoded from an override: yaml.v3 decides.
		out, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		s := strings.TrimSuffix(string(out), "\n")
		if strings.IndexByte(s, '\n') >= 0 {
			return errSlowPath
		}
		w.b = append(w.b, s...)
	}
	w.b = append(w.b, '\n')
	return nil
}

// oneLine is how yaml.v3 writes s as a value on one line (plain, single-
// or double-quoted), asked once per distinct string.
func (w *yamlWriter) oneLine(s string) (string, error) {
	if singleQuoted(s) {
		return "'" + strings.ReplaceAll(s, "'", "''") + "'", nil
	}
	if q, ok := w.scalars[s]; ok {
		return q, nil
	}
	if s == "<<" {
		return "", errSlowPath // a merge key in a mapping, not on its own
	}
	out, err := yaml.Marshal(s)
	if err != nil {
		return "", err
	}
	q := strings.TrimSuffix(string(out), "\n")
	if strings.IndexByte(q, '\n') >= 0 {
		return "", errSlowPath
	}
	w.scalars[s] = q
	return q, nil
}

// literal writes a multi-line string as yaml.v3 does, a literal block
// (`|`, or `|-` without a final line break) indented 2 past column ind. A
// string whose block yaml.v3 would write otherwise (leading blank, a blank
// before a line break, several final breaks, characters outside printable
// ASCII) takes the slow path.
func (w *yamlWriter) literal(ind int, s string) error {
	if s[0] == ' ' || s[0] == '\n' || strings.HasSuffix(s, "\n\n") || strings.HasSuffix(s, " ") || strings.Contains(s, " \n") {
		return errSlowPath
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 || c > 0x7e) && c != '\n' {
			return errSlowPath
		}
	}
	body := s
	if strings.HasSuffix(s, "\n") {
		w.b = append(w.b, "|\n"...)
		body = s[:len(s)-1]
	} else {
		w.b = append(w.b, "|-\n"...)
	}
	for {
		line, rest, found := strings.Cut(body, "\n")
		if line != "" {
			w.indent(ind + 2)
			w.b = append(w.b, line...)
		}
		w.b = append(w.b, '\n')
		if !found {
			break
		}
		body = rest
	}
	return nil
}

// singleQuoted reports whether yaml.v3 certainly writes s as a value in
// single quotes: printable ASCII without a leading or trailing blank
// (which would allow single quotes no more) holding ": ", which no plain
// block scalar may, and which no YAML number, keyword or timestamp holds
// (so yaml.v3 resolves it as a string and asks for plain, then settles for
// single quotes; its line width is unbounded, so nothing folds). Each
// step's label is such a string (":h200: <name>"); yaml.Marshal of one,
// its encoder set up and torn down each time, was 2% of an export's CPU.
func singleQuoted(s string) bool {
	if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' || !strings.Contains(s, ": ") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// plainSafe reports whether yaml.v3 certainly writes s plain in a block
// mapping: it starts with a letter that cannot begin a YAML 1.1/1.2
// keyword or number (true, no, null, ~, digits, signs, dots are left to
// yaml.v3), or with '/' or '_', and holds only letters, digits, and
// `_ - . / : *` with no `: ` (a ':' is always followed by a non-blank
// here; '*' is an indicator only first, as in artifact_paths'
// results/<name>/**/*).
func plainSafe(s string) bool {
	if s == "" {
		return false
	}
	switch c := s[0]; {
	case c == '/' || c == '_':
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		switch c {
		case 'y', 'Y', 'n', 'N', 't', 'T', 'f', 'F', 'o', 'O':
			return false
		}
	default:
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == '/' || c == ':' || c == '*' {
			continue
		}
		return false
	}
	return s[len(s)-1] != ':'
}

// sortedKeys is m's keys in yaml.v3's mapping order (keyList.Less for
// string keys: letters by code point, runs of digits by value).
func sortedKeys[V any](m map[string]V) []string {
	return slices.SortedFunc(maps.Keys(m), func(a, b string) int {
		if a == b {
			return 0
		}
		if yamlKeyLess(a, b) {
			return -1
		}
		return 1
	})
}

// yamlKeyLess is yaml.v3's keyList.Less for two string keys.
func yamlKeyLess(a, b string) bool {
	ar, br := []rune(a), []rune(b)
	digits := false
	for i := 0; i < len(ar) && i < len(br); i++ {
		if ar[i] == br[i] {
			digits = unicode.IsDigit(ar[i])
			continue
		}
		al := unicode.IsLetter(ar[i])
		bl := unicode.IsLetter(br[i])
		if al && bl {
			return ar[i] < br[i]
		}
		if al || bl {
			if digits {
				return al
			}
			return bl
		}
		var ai, bi int
		var an, bn int64
		if ar[i] == '0' || br[i] == '0' {
			for j := i - 1; j >= 0 && unicode.IsDigit(ar[j]); j-- {
				if ar[j] != '0' {
					an = 1
					bn = 1
					break
				}
			}
		}
		for ai = i; ai < len(ar) && unicode.IsDigit(ar[ai]); ai++ {
			an = an*10 + int64(ar[ai]-'0')
		}
		for bi = i; bi < len(br) && unicode.IsDigit(br[bi]); bi++ {
			bn = bn*10 + int64(br[bi]-'0')
		}
		if an != bn {
			return an < bn
		}
		if ai != bi {
			return ai < bi
		}
		return ar[i] < br[i]
	}
	return len(ar) < len(br)
}

// encodeYAMLv3 is the slow path: yaml.v3 with 2-space indentation.
func encodeYAMLv3(header string, p *pipeline.Pipeline) ([]byte, error) {
	var buf strings.Builder
	buf.WriteString(header)
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(p); err != nil {
		return nil, fmt.Errorf("marshal pipeline: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return []byte(buf.String()), nil
}
