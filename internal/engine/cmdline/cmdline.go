// Package cmdline models the command lines wlc renders and reads back: which
// options of an engine's command map to typed workload fields (or are set
// by wlc itself), how an argv token resolves to an option the way the
// engine's argparse parser resolves it, and how typed values become argv.
//
// An engine declares each command once, as data: a Spec listing the options
// wlc models (Flag: field, option name, kind) and the option strings every
// known release of the engine accepts (for aliases and abbreviations).
// Everything that reads or writes such a command line uses the Spec's one
// resolver (Resolve), parser (Parse, Match.Typed) and renderer (Render):
// vet's extra_args and bench args checks, recipe derivation, the perf-eval
// importer and the plan.
//
// Resolution follows Python's argparse as the engines configure it
// (ArgumentParser with allow_abbrev on, which vLLM's FlexibleArgumentParser
// keeps), plus vLLM's own preprocessing: --max_num_seqs is --max-num-seqs,
// --x.key=v sets one key of a JSON option, and an unambiguous prefix of a
// long option (--tensor-parallel) is that option.
package cmdline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Kind is how an option reads its value.
type Kind int

const (
	// Bool is a switch: --x sets true, --x's --no-x form (where the engine
	// has one) false; it takes no value.
	Bool Kind = iota
	Int
	Float
	// Size is an integer or a human-readable size as vLLM parses it:
	// 32k = 32000, 32K = 32768 (m/M, g/G, t/T alike; decimals only with
	// the decimal suffixes).
	Size
	// SizeOrAuto is a Size or "auto" (also written -1).
	SizeOrAuto
	String
	// JSON is a JSON object; --x.key=value sets one key of it.
	JSON
)

// Flag is one option a command's Spec models.
type Flag struct {
	// Name is the canonical long option, e.g. "--tensor-parallel-size".
	Name string
	// Aliases are further option strings; the Spec's Releases supply the
	// engine's own (-tp), so these are only for engines without them.
	Aliases []string
	Kind    Kind
	// Field is the typed field that sets the option, as users read it
	// ("serve.tensor_parallel_size", "the config's num_prompts"); Owner,
	// for options no field sets, says who does ("the runner (...)").
	Field string
	Owner string
	// Default is the engine's default: Render omits a value equal to it.
	Default any
	// Optional options accept the literal None (the engine's default).
	Optional bool
	// Launch options start one rank of a multi-node server; the runner
	// sets them on every node (Owner says how).
	Launch bool
	// Equivalent is the other engine's field that means the same thing
	// (an SGLang option's vLLM serve field), for messages.
	Equivalent string
}

// SetBy names what sets the option: its field, else its owner.
func (f *Flag) SetBy() string {
	if f.Field != "" {
		return f.Field
	}
	return f.Owner
}

// Release is the option strings one release of the engine accepts, one
// argparse action per entry, the canonical long name first.
type Release struct {
	Label   string
	Actions [][]string
}

// Spec declares one command line of an engine.
type Spec struct {
	// Command names the command in messages, e.g. "vllm serve".
	Command string
	// Flags are the options wlc models, in the order Render writes them.
	Flags []Flag
	// Releases are the option strings of every known release. Aliases and
	// abbreviations resolve against them; without them only the Flags'
	// names and aliases resolve, exactly.
	Releases []Release
	// Exact is a parser that reads option strings exactly as written
	// (Rust's clap): no abbreviations, no _ for -, no dotted keys; only
	// --x=value splits.
	Exact bool

	once   sync.Once
	byName map[string]*Flag // canonical long name → flag
	exact  map[string]*Flag // declared names and aliases
	rels   []release
}

type release struct {
	label  string
	action map[string]string // option string → canonical long name
	opts   []string          // sorted option strings
}

func (s *Spec) index() {
	s.once.Do(func() {
		s.byName, s.exact = map[string]*Flag{}, map[string]*Flag{}
		for i := range s.Flags {
			f := &s.Flags[i]
			s.byName[f.Name] = f
			s.exact[f.Name] = f
			for _, a := range f.Aliases {
				s.exact[a] = f
			}
		}
		for _, r := range s.Releases {
			rel := release{label: r.Label, action: map[string]string{}}
			for _, act := range append(r.Actions, []string{"--help", "-h"}) {
				for _, o := range act {
					rel.action[o] = act[0]
					rel.opts = append(rel.opts, o)
				}
			}
			sort.Strings(rel.opts)
			s.rels = append(s.rels, rel)
		}
	})
}

// Knows reports whether some release has the option string opt exactly
// (after the engine's _-as-- reading).
func (s *Spec) Knows(opt string) bool {
	s.index()
	if strings.HasPrefix(opt, "--") && !s.Exact {
		opt = strings.ReplaceAll(opt, "_", "-")
	}
	_, ok := s.exactName(opt)
	return ok
}

// Lookup returns the declared flag with canonical name name.
func (s *Spec) Lookup(name string) *Flag {
	s.index()
	return s.byName[name]
}

// Match is what one option token means.
type Match struct {
	// Flag is the declared flag the token sets, nil for other options.
	Flag *Flag
	// Option is the option's canonical long name ("--tensor-parallel-size"),
	// or the token's option part when no release knows it.
	Option string
	// Written is the option part as written ("-tp", "--tensor_parallel").
	Written string
	// Negated is the --no-x form of a switch.
	Negated bool
	// Key is the dotted JSON key path (--x.a.b=v: "a.b"); Append is its
	// list-append form (--x.a+ v).
	Key    string
	Append bool
	// Value is what follows "=" in the token (HasValue), or the rest of a
	// single-character option's token (-n2).
	Value    string
	HasValue bool
	// Abbrev names the release in which the token is an unambiguous
	// prefix of Option ("" when it spells an option string exactly).
	Abbrev string
}

// Canonical renders the match's option the canonical way: the long name,
// its --no- form, or the dotted key on it.
func (m Match) Canonical() string {
	o := m.Option
	if m.Negated {
		o = "--no-" + strings.TrimPrefix(o, "--")
	}
	if m.Key != "" {
		o += "." + m.Key
		if m.Append {
			o += "+"
		}
	}
	return o
}

// negativeNumber is argparse's _negative_number_matcher,
// ^-\d+$|^-\d*\.\d+$ (ASCII digits), written out: IsOption runs on every
// token of every workload's command lines, where the regexp was 1% of a
// cold vet.
func negativeNumber(tok string) bool {
	if len(tok) < 2 || tok[0] != '-' {
		return false
	}
	s := tok[1:]
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i == len(s) {
		return true // -\d+ (s is not empty)
	}
	if s[i] != '.' {
		return false
	}
	j := i + 1
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	return j == len(s) && j > i+1 // -\d*\.\d+
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// IsOption reports whether argparse reads tok as an option rather than a
// value: it starts with "-", is longer than "-" and is no negative number.
func IsOption(tok string) bool {
	return len(tok) > 1 && tok[0] == '-' && tok != "--" && !negativeNumber(tok) && !strings.Contains(tok, " ")
}

// Resolve tells what option tok names, the way the engine's parser does:
// exact option strings first (with --x_y read as --x-y and --x.key as a
// key of --x), then a single-character option with its value attached
// (-n2), then an unambiguous prefix of a long option in some release. It
// reports false for a token that is no option.
//
// As argparse, the option strings come first: a token with a space or a
// negative number is a value only when it names no option ("--max-concurrency= 64"
// sets --max-concurrency, Python's int() strips the space).
func (s *Spec) Resolve(tok string) (Match, bool) {
	if len(tok) < 2 || tok[0] != '-' || tok == "--" {
		return Match{}, false
	}
	s.index()
	m := Match{}
	opt := tok
	if i := strings.IndexByte(tok, '='); i >= 0 {
		opt, m.Value, m.HasValue = tok[:i], tok[i+1:], true
	}
	if s.Exact {
		m.Written = opt
		if name, ok := s.exactName(opt); ok {
			return s.finish(m, opt, name), true
		}
		m.Option = opt // clap reads any other -x token as an option
		return m, true
	}
	if strings.HasPrefix(opt, "--") {
		// vLLM reads underscores as dashes up to the first dot.
		head, key, dotted := strings.Cut(opt, ".")
		opt = strings.ReplaceAll(head, "_", "-")
		if dotted {
			opt += "." + key
		}
	}
	if head, key, dotted := strings.Cut(opt, "."); dotted && len(head) > 1 {
		opt, m.Key = head, key
		if strings.HasSuffix(key, "+") {
			m.Key, m.Append = strings.TrimSuffix(key, "+"), true
		}
	}
	m.Written = opt
	if name, ok := s.exactName(opt); ok {
		return s.finish(m, opt, name), true
	}
	// -n2: a single-character option with its value attached.
	if !strings.HasPrefix(opt, "--") && len(opt) > 2 && !m.HasValue && m.Key == "" {
		if name, ok := s.exactName(opt[:2]); ok {
			m.Written, m.Value, m.HasValue = opt[:2], opt[2:], true
			return s.finish(m, opt[:2], name), true
		}
	}
	// An abbreviation: the first release in which it is unambiguous and
	// names a declared flag decides; else any release's reading.
	var other *Match
	for _, r := range s.rels {
		i := sort.SearchStrings(r.opts, opt)
		actions := map[string]string{}
		for ; i < len(r.opts) && strings.HasPrefix(r.opts[i], opt); i++ {
			actions[r.action[r.opts[i]]] = r.opts[i]
		}
		if len(actions) != 1 {
			continue
		}
		for name, full := range actions {
			got := s.finish(m, full, name)
			got.Abbrev = r.label
			if got.Flag != nil {
				return got, true
			}
			if other == nil {
				other = &got
			}
		}
	}
	if other != nil {
		return *other, true
	}
	if !IsOption(tok) {
		return Match{}, false
	}
	m.Option = opt
	return m, true
}

// exactName is the canonical name of an option string some release (or
// the declaration) has.
func (s *Spec) exactName(opt string) (string, bool) {
	if f, ok := s.exact[opt]; ok {
		return f.Name, true
	}
	if strings.HasPrefix(opt, "--no-") {
		if f, ok := s.byName["--"+strings.TrimPrefix(opt, "--no-")]; ok && f.Kind == Bool && len(s.rels) == 0 {
			return f.Name, true
		}
	}
	for _, r := range s.rels {
		if name, ok := r.action[opt]; ok {
			return name, true
		}
	}
	return "", false
}

func (s *Spec) finish(m Match, spelled, name string) Match {
	m.Option = name
	m.Flag = s.byName[name]
	m.Negated = strings.HasPrefix(spelled, "--no-") && !strings.HasPrefix(name, "--no-")
	return m
}

// Typed reads the option's value (value, has: the "=" part or the next
// token) into the flag's kind; prev is the flag's value so far, which a
// dotted JSON key updates. A None for an Optional flag is nil.
func (m Match) Typed(value string, has bool, prev any) (any, error) {
	f := m.Flag
	if f == nil {
		return nil, fmt.Errorf("%s is not an option wlc models", m.Written)
	}
	if f.Kind == Bool {
		if has || m.Key != "" {
			return nil, fmt.Errorf("%s is a switch and takes no value (write %s or --no-%s)", m.Written, f.Name, strings.TrimPrefix(f.Name, "--"))
		}
		return !m.Negated, nil
	}
	if !has {
		return nil, fmt.Errorf("%s needs a value", m.Written)
	}
	if m.Key != "" {
		if f.Kind != JSON {
			return nil, fmt.Errorf("%s takes no dotted keys", f.Name)
		}
		return setKey(prev, m.Key, m.Append, value), nil
	}
	if value == "None" && f.Optional {
		return nil, nil
	}
	switch f.Kind {
	case Int:
		n, err := strconv.Atoi(strings.TrimSpace(value))
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", value)
		}
		return n, nil
	case Float:
		x, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", value)
		}
		return x, nil
	case Size:
		return HumanInt(value)
	case SizeOrAuto:
		if v := strings.TrimSpace(value); v == "-1" || strings.EqualFold(v, "auto") {
			return "auto", nil
		}
		n, err := HumanInt(value)
		if err != nil {
			return nil, fmt.Errorf("%q is neither a token count, a size such as 32k, nor auto", value)
		}
		return n, nil
	case JSON:
		v, err := DecodeJSON(value)
		obj, isObj := v.(map[string]any)
		if err != nil || !isObj {
			return nil, fmt.Errorf("%s is not a JSON object", value)
		}
		return obj, nil
	}
	return value, nil
}

var humanInt = regexp.MustCompile(`^(\d+(?:\.\d+)?)([kKmMgGtT])$`)

// HumanInt parses an integer the way vLLM's human_readable_int does: 1k is
// 1000, 1K is 1024, 25.6k is 25600; a binary suffix takes no decimals.
func HumanInt(s string) (int, error) {
	s = strings.TrimSpace(s)
	if m := humanInt.FindStringSubmatch(s); m != nil {
		exp := strings.IndexByte("kmgt", m[2][0]|0x20) + 1
		if m[2][0] >= 'a' {
			x, _ := strconv.ParseFloat(m[1], 64)
			for range exp {
				x *= 1000
			}
			return int(x), nil
		}
		n, err := strconv.Atoi(m[1])
		if err != nil {
			return 0, fmt.Errorf("%q: decimals are not allowed with binary suffixes like %s; did you mean %s%s?", s, m[2], m[1], strings.ToLower(m[2]))
		}
		return n << (10 * exp), nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not an integer or a size such as 32k", s)
	}
	return n, nil
}

// setKey sets key (a.b.c) in a copy of prev to value read the way vLLM
// reads a dotted value: JSON, else a human-readable integer, else a Python
// boolean, else the string; Append adds comma-separated items to a list.
func setKey(prev any, key string, appendList bool, value string) map[string]any {
	out := deepCopy(prev)
	keys := strings.Split(key, ".")
	m := out
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	last := keys[len(keys)-1]
	if appendList {
		list, _ := m[last].([]any)
		for _, item := range strings.Split(value, ",") {
			list = append(list, item)
		}
		m[last] = list
		return out
	}
	m[last] = DottedValue(value)
	return out
}

// DottedValue reads the value of --x.key=value as vLLM does.
func DottedValue(v string) any {
	if j, err := DecodeJSON(v); err == nil {
		return j
	}
	if n, err := HumanInt(v); err == nil {
		return n
	}
	switch v {
	case "True":
		return true
	case "False":
		return false
	}
	return v
}

func deepCopy(v any) map[string]any {
	out := map[string]any{}
	m, _ := v.(map[string]any)
	for k, e := range m {
		if sub, ok := e.(map[string]any); ok {
			e = deepCopy(sub)
		}
		out[k] = e
	}
	return out
}

// DecodeJSON decodes one JSON document with integers kept as int (CUE
// tells 3 from 3.0).
func DecodeJSON(s string) (any, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data")
	}
	return numbers(v), nil
}

func numbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.Atoi(x.String()); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
	}
	return v
}

// Unit is one option with its value, or one positional token, of an argv.
type Unit struct {
	// Start and End delimit the unit's tokens: argv[Start:End].
	Start, End int
	// IsOption is false for a positional token; Match is then zero.
	IsOption bool
	Match
	// Arg is the option's value (Match.Value or the next token).
	Arg    string
	HasArg bool
}

// Parsed is an argv split into typed values and the rest.
type Parsed struct {
	Units []Unit
	// Values are the declared flags' values by Field, the last unit
	// winning (a dotted key updates the object so far).
	Values map[string]any
	// Rest are the tokens of units no declared flag with a Field holds,
	// in order.
	Rest []string
	// Errs are the units whose value does not read, by unit index.
	Errs map[int]error
}

// isOption reports whether the parser reads tok as an option.
func (s *Spec) isOption(tok string) bool {
	_, ok := s.Resolve(tok)
	return ok
}

// Parse splits argv into units and reads declared flags' values. An
// option takes the next token as its value unless it is a switch, has an
// "=" value, or the next token is itself an option.
func (s *Spec) Parse(argv []string) Parsed {
	p := Parsed{Values: map[string]any{}, Errs: map[int]error{}}
	for i := 0; i < len(argv); i++ {
		m, ok := s.Resolve(argv[i])
		u := Unit{Start: i, End: i + 1, IsOption: ok, Match: m, Arg: m.Value, HasArg: m.HasValue}
		if ok && !u.HasArg && (m.Flag == nil || m.Flag.Kind != Bool || m.Key != "") && i+1 < len(argv) && (!s.isOption(argv[i+1]) || m.Key != "") {
			// vLLM takes a dotted key's value whatever it looks like.
			i++
			u.End, u.Arg, u.HasArg = i+1, argv[i], true
		}
		p.Units = append(p.Units, u)
		if !ok || m.Flag == nil || m.Flag.Field == "" {
			p.Rest = append(p.Rest, argv[u.Start:u.End]...)
			continue
		}
		v, err := m.Typed(u.Arg, u.HasArg, p.Values[m.Flag.Field])
		if err != nil {
			p.Errs[len(p.Units)-1] = err
			continue
		}
		p.Values[m.Flag.Field] = v
	}
	return p
}

// Render writes the declared flags' values (by Field) as argv, in the
// Flags' order: a switch as --x or --no-x, a JSON object compact with
// sorted keys. A missing or nil value, or one equal to the flag's
// Default, is omitted.
func (s *Spec) Render(values map[string]any) []string {
	var out []string
	for _, f := range s.Flags {
		v, ok := values[f.Field]
		if f.Field == "" || !ok || v == nil || (f.Default != nil && reflect.DeepEqual(v, f.Default)) {
			continue
		}
		if f.Kind == Bool {
			if b, _ := v.(bool); b {
				out = append(out, f.Name)
			} else {
				out = append(out, "--no-"+strings.TrimPrefix(f.Name, "--"))
			}
			continue
		}
		out = append(out, f.Name, Token(v))
	}
	return out
}

// Fields are a struct's fields by JSON name under prefix, as Render
// reads them: a nil pointer or a zero value is unset, a set pointer's
// value is set even when zero (enable_prefix_caching: false).
func Fields(prefix string, v any) map[string]any {
	out := map[string]any{}
	rv := reflect.Indirect(reflect.ValueOf(v))
	for i := 0; i < rv.NumField(); i++ {
		name, _, _ := strings.Cut(rv.Type().Field(i).Tag.Get("json"), ",")
		fv := rv.Field(i)
		if name == "" || name == "-" || fv.IsZero() {
			continue
		}
		if fv.Kind() == reflect.Pointer {
			fv = fv.Elem()
		}
		out[prefix+name] = fv.Interface()
	}
	return out
}

// Token renders a value as one argv token: numbers without exponent
// noise, objects and lists as compact JSON with sorted keys.
func Token(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		if x == float64(int64(x)) && x < 1e15 && x > -1e15 {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'f', -1, 64)
	case json.Number:
		return x.String()
	case nil:
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
