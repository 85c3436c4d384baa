package sglang

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Arg is one option read from an argv.
type Arg struct {
	Option *Option
	// Token is the option as written (--tp, --tp-size=8); Index is its
	// position in the argv.
	Token  string
	Index  int
	Values []string
}

// ParseError is what argparse would refuse, at argv[Index].
type ParseError struct {
	Index int
	Msg   string
}

func (e ParseError) Error() string { return e.Msg }

// negative is argparse's negative-number pattern: such a token is a value
// (chunked_prefill_size -1), never an option, since no option looks like one.
var negative = regexp.MustCompile(`^-\d+$|^-\d*\.\d+$`)

// optionLike reports whether argparse reads tok as an option string.
func optionLike(tok string) bool {
	return len(tok) > 1 && tok[0] == '-' && !negative.MatchString(tok)
}

// Parse reads argv as argparse reads it for t, reporting every problem
// (argparse stops at the first): unknown or ambiguous options, missing or
// ill-typed values, values outside the choices, deprecated options and
// positional arguments (neither command takes any).
func (t *Table) Parse(argv []string) ([]Arg, []ParseError) {
	var args []Arg
	var errs []ParseError
	bad := func(i int, format string, a ...any) {
		errs = append(errs, ParseError{Index: i, Msg: fmt.Sprintf(format, a...)})
	}
	for i := 0; i < len(argv); i++ {
		tok := argv[i]
		if tok == "--" {
			for j := i + 1; j < len(argv); j++ {
				bad(j, "unrecognized arguments: %s", argv[j])
			}
			break
		}
		if !optionLike(tok) {
			bad(i, "unrecognized arguments: %s", tok)
			continue
		}
		name, val, hasVal := tok, "", false
		if strings.HasPrefix(tok, "--") {
			name, val, hasVal = strings.Cut(tok, "=")
		}
		o, cands := t.Lookup(name)
		if o == nil {
			if len(cands) > 0 {
				bad(i, "ambiguous option: %s could match %s", name, strings.Join(cands, ", "))
				continue
			}
			// argparse names the unknown option with the values after it.
			words := []string{tok}
			at := i
			for i+1 < len(argv) && !optionLike(argv[i+1]) && argv[i+1] != "--" {
				i++
				words = append(words, argv[i])
			}
			bad(at, "unrecognized arguments: %s", strings.Join(words, " "))
			continue
		}
		a := Arg{Option: o, Token: tok, Index: i}
		switch o.Kind {
		case Deprecated:
			bad(i, "%s is deprecated and refused by %s", o.Name(), t.Prog)
			continue
		case Flag:
			if hasVal {
				bad(i, "argument %s: ignored explicit argument '%s'", o.Name(), val)
				continue
			}
		case Value, Int, Float:
			if !hasVal {
				if i+1 >= len(argv) || optionLike(argv[i+1]) {
					bad(i, "argument %s: expected one argument", strings.Join(o.Names, "/"))
					continue
				}
				i++
				val = argv[i]
			}
			a.Values = []string{val}
		case Optional:
			if hasVal {
				a.Values = []string{val}
			} else if i+1 < len(argv) && !optionLike(argv[i+1]) {
				i++
				a.Values = []string{argv[i]}
			}
		case List, AnyList:
			if hasVal {
				a.Values = []string{val}
			}
			for i+1 < len(argv) && !optionLike(argv[i+1]) && argv[i+1] != "--" {
				i++
				a.Values = append(a.Values, argv[i])
			}
			if o.Kind == List && len(a.Values) == 0 {
				bad(a.Index, "argument %s: expected at least one argument", strings.Join(o.Names, "/"))
				continue
			}
		}
		if msg := check(o, a.Values); msg != "" {
			bad(a.Index, "argument %s: %s", strings.Join(o.Names, "/"), msg)
			continue
		}
		args = append(args, a)
	}
	return args, errs
}

// check applies the option's type and choices to its value.
func check(o *Option, vals []string) string {
	for _, v := range vals {
		switch o.Kind {
		case Int:
			if _, err := strconv.Atoi(strings.TrimSpace(v)); err != nil {
				return fmt.Sprintf("invalid int value: '%s'", v)
			}
		case Float:
			if _, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil {
				return fmt.Sprintf("invalid float value: '%s'", v)
			}
		}
		if len(o.Choices) > 0 && !contains(o.Choices, v) {
			q := make([]string, len(o.Choices))
			for i, c := range o.Choices {
				q[i] = "'" + c + "'"
			}
			return fmt.Sprintf("invalid choice: '%s' (choose from %s)", v, strings.Join(q, ", "))
		}
	}
	return ""
}
