package vllmcatalog

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// ParseHelp reads the options of one vLLM command from its argparse help
// output: `vllm serve --help=all` (plain `--help` lists only some groups
// in recent releases) or `vllm bench serve --help`. Help text says which
// option strings exist, which take a value, their choices ({a,b}) and
// nargs; it does not list a JSON config's keys, so a catalog read from help
// accepts any key.
func ParseHelp(text string) ([]*Flag, error) {
	// argparse prints UTF-8; other bytes are no option or choice anyone
	// can type in a workload (CUE strings are UTF-8), and a catalog
	// could not write them back.
	if !utf8.ValidString(text) {
		bad := 0
		for r, n := utf8.DecodeRuneInString(text); r != utf8.RuneError || n != 1; r, n = utf8.DecodeRuneInString(text[bad:]) {
			bad += n
		}
		return nil, fmt.Errorf("not UTF-8 text: line %d holds a byte that is not; save the help output as the image prints it", strings.Count(text[:bad], "\n")+1)
	}
	var flags []*Flag
	seen := map[string]bool{}
	byOption := map[string]*Flag{}
	// help is the current action's help text: a value option whose help
	// mentions JSON is a config flag, which takes dotted keys.
	var cur *Flag
	var help strings.Builder
	endAction := func() {
		if cur != nil && cur.Kind == Value && strings.Contains(help.String(), "JSON") {
			cur.Kind = JSONOrStr
		}
		cur = nil
		help.Reset()
	}
	for _, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		inv, ok := invocation(line)
		if !ok {
			if strings.HasPrefix(line, "  ") {
				help.WriteString(line)
			} else {
				endAction()
			}
			continue
		}
		endAction()
		help.WriteString(strings.TrimPrefix(strings.TrimLeft(line, " "), inv))
		f := parseInvocation(inv)
		if f == nil || seen[f.Options[0]] {
			continue
		}
		// argparse refuses an option string twice, so only a mangled help
		// file repeats one: the first action keeps it.
		f.Options = slices.DeleteFunc(f.Options, func(o string) bool {
			dup := seen[o]
			seen[o] = true
			return dup
		})
		cur = f
		flags = append(flags, f)
		for _, o := range f.Options {
			byOption[o] = f
		}
	}
	endAction()
	if len(flags) == 0 {
		return nil, fmt.Errorf("no options found: expected argparse help output (lines like `  --max-num-seqs MAX_NUM_SEQS`)")
	}
	// BooleanOptionalAction prints "--x, --no-x": one action, Bool.
	for _, f := range flags {
		if f.Kind != Switch {
			continue
		}
		for _, o := range f.Options {
			if strings.HasPrefix(o, "--no-") && byOption["--"+strings.TrimPrefix(o, "--no-")] == f {
				f.Kind = Bool
			}
		}
	}
	return flags, nil
}

// optionLine is an argparse action line: two to four spaces of indent, then
// an option string. Help text continuation lines are indented further.
var optionLine = regexp.MustCompile(`^ {1,4}(-{1,2}[A-Za-z0-9][^ ]*)`)

// optionString is what an option string of vLLM's is, as schema
// #ExtraOption.option says: other text on an option line (a tab, a comma,
// a control character) is not an option, and the compact catalog form
// could not hold it.
var optionString = regexp.MustCompile(`^--?[A-Za-z0-9][A-Za-z0-9_-]*$`)

// invocation returns the action part of a help line: argparse separates it
// from the help text by at least two spaces.
func invocation(line string) (string, bool) {
	if !optionLine.MatchString(line) {
		return "", false
	}
	s := strings.TrimLeft(line, " ")
	if i := strings.Index(s, "  "); i >= 0 {
		s = s[:i]
	}
	return s, true
}

// parseInvocation reads "--x X, -x X", "--x {a,b}", "--x [X]",
// "--x X [X ...]", "--x, --no-x" or "-h, --help".
func parseInvocation(inv string) *Flag {
	f := &Flag{Kind: Switch}
	var metavar string
	for _, part := range splitOptions(inv) {
		opt, mv, _ := strings.Cut(part, " ")
		if opt == "-h" || opt == "--help" {
			return nil
		}
		if !optionString.MatchString(opt) {
			continue
		}
		f.Options = append(f.Options, opt)
		if mv != "" && metavar == "" {
			metavar = mv
		}
	}
	if len(f.Options) == 0 {
		return nil
	}
	// The long option first, as in the built-in catalogs.
	for i, o := range f.Options {
		if strings.HasPrefix(o, "--") && !strings.HasPrefix(o, "--no-") {
			f.Options[0], f.Options[i] = f.Options[i], f.Options[0]
			break
		}
	}
	if metavar == "" {
		return f
	}
	f.Kind = Value
	first := metavar
	switch {
	case strings.HasPrefix(metavar, "[") && strings.HasSuffix(metavar, " ...]"):
		f.Nargs = "*"
		first = strings.TrimPrefix(strings.TrimSuffix(metavar, " ...]"), "[")
		first, _, _ = strings.Cut(first, " ")
	case strings.HasPrefix(metavar, "["):
		f.Nargs = "?"
		first = strings.TrimSuffix(strings.TrimPrefix(metavar, "["), "]")
	case strings.HasSuffix(metavar, " ...]"):
		f.Nargs = "+"
		first, _, _ = strings.Cut(metavar, " ")
	}
	if strings.HasPrefix(first, "{") && strings.HasSuffix(first, "}") {
		f.Choices = strings.Split(strings.TrimSuffix(strings.TrimPrefix(first, "{"), "}"), ",")
	}
	return f
}

// splitOptions splits an invocation at the ", " between option strings,
// not at the commas inside a {choices} metavar.
func splitOptions(inv string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(inv); i++ {
		switch inv[i] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case ',':
			if depth == 0 && i+1 < len(inv) && inv[i+1] == ' ' {
				parts = append(parts, inv[start:i])
				start = i + 2
				i++
			}
		}
	}
	return append(parts, inv[start:])
}
