package load

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/load"
	"cuelang.org/go/cue/token"

	"github.com/wlcdev/wlc/internal/check"
	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/internal/diag/suggest"
	"github.com/wlcdev/wlc/schema"
)

// userPos returns the position of v in a user file, looking through the
// conjuncts CUE unified into v; it is invalid when only the schema defines
// v.
func (l *loader) userPos(v cue.Value) token.Pos {
	if !v.Exists() {
		return token.NoPos
	}
	if p := v.Pos(); p.IsValid() && !l.isSchema(p.Filename()) {
		return p
	}
	for _, c := range conjuncts(v) {
		if p := c.Pos(); p.IsValid() && !l.isSchema(p.Filename()) {
			return p
		}
	}
	return token.NoPos
}

func conjuncts(v cue.Value) []cue.Value {
	op, args := v.Expr()
	if op != cue.AndOp {
		return nil
	}
	var out []cue.Value
	for _, a := range args {
		out = append(out, a)
		out = append(out, conjuncts(a)...)
	}
	return out
}

// addCUEError converts a CUE error (list) into diagnostics, each at the
// most useful user position: the user's own value when CUE names it, else
// the workload field a schema rule blames (see _check in the schema).
func (l *loader) addCUEError(err error, pkg cue.Value, at ...cue.Path) {
	if l.seen == nil {
		l.seen = map[string]bool{}
	}
	for _, e := range cueerrors.Errors(err) {
		// e.Path() quotes labels that are not identifiers ("-w").
		var path []string
		for _, el := range e.Path() {
			if u, err := strconv.Unquote(el); err == nil && strings.HasPrefix(el, "\"") {
				el = u
			}
			path = append(path, el)
		}
		if len(at) > 0 {
			path = nil
			for _, s := range at[0].Selectors() {
				path = append(path, selLabel(s))
			}
		}
		format, args := e.Msg()
		msg := fmt.Sprintf(format, args...)
		if cause, ok := importCause(e); ok {
			// The path is the importing package's; the cause is the news.
			msg, path = "import failed: "+cause, nil
		}
		// A missing field does not exist: blame the struct that lacks it,
		// in the words used for top-level fields.
		if msg == "field is required but not present" && len(path) > 1 {
			msg = "required field missing: " + path[len(path)-1]
			path = path[:len(path)-1]
		}
		// Two keys per error, kept apart by their prefix: the raw error
		// (path + CUE text) and the finding (shown path + message). For a
		// path-less error such as a syntax error they were equal, and the
		// finding was dropped as its own duplicate.
		rawKey := "raw\x00" + strings.Join(path, "\x00") + "\x00" + e.Error()
		if len(path) == 0 {
			rawKey += "\x00" + e.Position().String() // see the finding's key
		}
		if l.seen[rawKey] {
			continue
		}
		l.seen[rawKey] = true
		// A workload's copy of its profile (#profile, _profile) repeats
		// the errors reported on profiles.<name> itself, as would any
		// definition field copying a field for a block's rules.
		if hasDefinition(path) || indexOf(path, "_profile") >= 0 {
			continue
		}
		// An error on a let (the schema's arithmetic helpers) repeats an
		// error already reported on the field it reads.
		if l.pkg.Exists() && len(path) > 1 && indexOf(path, "_check") < 0 && !strings.HasPrefix(path[0], "#") {
			if p := cue.ParsePath(cuePath(path)); p.Err() == nil && !l.pkg.LookupPath(p).Exists() {
				continue
			}
		}
		msg = strings.TrimSuffix(msg, ":")
		var closed closedBy
		if msg == "field not allowed" {
			msg = l.explainNotAllowed(path)
			if msg == "field not allowed" { // a field the schema has
				var ok bool
				if closed, ok = l.closedByDefinition(path); ok {
					// One finding for the block, at the reference: each
					// field it refuses would say the same.
					msg, path = closed.message(), closed.path
				}
			}
		}
		var pos token.Pos
		var written, literals []token.Pos // the user's places, and those holding a value
		for _, p := range cueerrors.Positions(e) {
			same := func(q token.Pos) bool { return q.Position() == p.Position() }
			if l.isSchema(p.Filename()) || isTyping(p.Filename()) || slices.ContainsFunc(written, same) {
				continue
			}
			written = append(written, p)
			if strings.HasPrefix(msg, "conflicting values ") && l.literalAt(p) {
				literals = append(literals, p)
			}
		}
		if len(literals) > 0 {
			// CUE's places also name the reference through which a
			// helper's value came: the values are what was written (one
			// value, refused, is not written twice).
			written = literals
		}
		if len(written) > 0 {
			pos = written[0]
		}
		if closed.ref.IsValid() {
			pos = closed.ref
		}
		if m, ok := l.nameConflict(path, msg, literals); ok {
			msg = m
		} else if strings.HasPrefix(msg, "conflicting values ") && len(written) > 1 {
			// Two values the user wrote (a field set twice, or by a helper
			// and again), not a value the schema refuses.
			var places []string
			for _, p := range written {
				places = append(places, fmt.Sprintf("%s:%d:%d", l.rel(p.Filename()), p.Line(), p.Column()))
			}
			msg += givenTwice + strings.Join(places, " and ") + "; keep one"
		}
		shown := path
		if l.singleServerRuleBeside(path) {
			continue
		}
		if i := indexOf(path, "_check"); i >= 0 && i+1 < len(path) {
			// _check.<blame>.<rule>: report against <prefix>.<blame>.
			prefix := path[:i]
			blame := path[i+1]
			shown = append(append([]string(nil), prefix...), splitBlame(blame)...)
			if !pos.IsValid() && pkg.Exists() {
				pos = l.blamePos(pkg, shown)
			}
		}
		if !pos.IsValid() && pkg.Exists() && len(path) > 0 {
			pos = l.blamePos(pkg, path)
		}
		if !pos.IsValid() {
			for _, p := range cueerrors.Positions(e) {
				pos = p
				break
			}
		}
		if open, ok := strings.CutPrefix(msg, "incomplete value "); ok && pkg.Exists() && len(path) > 0 {
			// The user's own value, not one the schema computes from it.
			if p := cue.ParsePath(cuePath(path)); p.Err() == nil && l.userPos(pkg.LookupPath(p)).IsValid() {
				msg += incompleteHint(open)
			}
		}
		d := diag.Diagnostic{Severity: diag.Error, Path: cuePath(shown), Message: cleanMessage(msg)}
		if pos.IsValid() {
			d.File, d.Line, d.Column = l.rel(pos.Filename()), pos.Line(), pos.Column()
		}
		key := "diag\x00" + d.Path + "\x00" + d.Message
		if d.Path == "" {
			// A path-less error (a syntax error) is one finding per
			// place: two files may make the same mistake.
			key += fmt.Sprintf("\x00%s:%d:%d", d.File, d.Line, d.Column)
		}
		if l.seen[key] {
			continue
		}
		l.seen[key] = true
		l.res.Diags.Add(d)
	}
}

// blamePos finds the nearest user-written value on path, walking up to the
// enclosing struct when the field itself only has a schema default.
func (l *loader) blamePos(pkg cue.Value, path []string) token.Pos {
	for n := len(path); n > 0; n-- {
		p := cue.ParsePath(cuePath(path[:n]))
		if p.Err() != nil {
			continue
		}
		v := pkg.LookupPath(p)
		if pos := l.userPos(v); pos.IsValid() && !isTyping(pos.Filename()) {
			return pos
		}
		// A struct the user wrote: its label (workloads.w is typed by the
		// pattern in wlc.cue, which says nothing about w).
		if pos := l.labelPos(p.Selectors()); pos.IsValid() {
			return pos
		}
		// A workload struct's own position is the pattern in wlc.cue; its
		// required profile field is in the user's file.
		if n == 2 && path[0] == "workloads" {
			if pos := l.userPos(v.LookupPath(pathOf("profile"))); pos.IsValid() {
				return pos
			}
		}
	}
	return token.NoPos
}

// isTyping reports whether file is a package's wlc.cue, the two lines
// typing every profile and workload: never the place a user should fix.
func isTyping(file string) bool {
	return filepath.Base(file) == "wlc.cue"
}

// hasDefinition reports whether path passes through a definition field
// below its top level (workloads.w.#profile, profiles.p.#facts).
func hasDefinition(path []string) bool {
	for _, p := range path[min(1, len(path)):] {
		if strings.HasPrefix(p, "#") {
			return true
		}
	}
	return false
}

func indexOf(path []string, s string) int {
	for i, p := range path {
		if p == s {
			return i
		}
	}
	return -1
}

// splitBlame turns a blame string such as `serve.kv_cache_dtype` or
// `args."num_prompts"` into path elements.
func splitBlame(b string) []string {
	if b == "" || b == `""` {
		return nil
	}
	if u, err := strconv.Unquote(b); err == nil {
		b = u
	}
	p := cue.ParsePath(b)
	if p.Err() != nil {
		return []string{b}
	}
	var out []string
	for _, s := range p.Selectors() {
		out = append(out, selLabel(s))
	}
	return out
}

// selLabel is a selector as a path element: the unquoted name, or the
// index of a list element (Unquoted panics on those).
func selLabel(s cue.Selector) string {
	switch {
	case s.IsString():
		return s.Unquoted()
	case s.LabelType() == cue.IndexLabel && !s.IsConstraint():
		return strconv.Itoa(s.Index())
	}
	return s.String()
}

func cuePath(elems []string) string {
	var b strings.Builder
	for i, e := range elems {
		if isIndex(e) {
			b.WriteString("[" + e + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(check.Label(e))
	}
	return b.String()
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// cleanMessage drops CUE internals (package-qualified hidden names) that
// mean nothing to a workload author.
func cleanMessage(m string) string {
	return strings.ReplaceAll(m, "(github.com/wlcdev/wlc/schema)", "")
}

// dropEngineCascade keeps a refused engine's error alone. The blocks an
// engine runs (blocks: sglang, vllm_bench, …) are typed by
// #OnEngine[engine]; with no valid engine CUE reports such a block as an
// undefined field of #OnEngine, named by the refused value, or each field
// written in it as not allowed (which, depends on what else read the
// block): consequences of the engine, which is the one thing to fix, so
// every error in those blocks of that workload goes.
func dropEngineCascade(in diag.List, blocks []string) diag.List {
	var drop []string
	for _, d := range in {
		if w, ok := strings.CutSuffix(d.Path, ".engine"); ok && d.Severity == diag.Error {
			for _, b := range blocks {
				drop = append(drop, w+"."+b)
			}
		}
	}
	if len(drop) == 0 {
		return in
	}
	var out diag.List
	for _, d := range in {
		if !slices.ContainsFunc(drop, func(b string) bool {
			return d.Path == b || strings.HasPrefix(d.Path, b+".") || strings.HasPrefix(d.Path, b+"[")
		}) {
			out = append(out, d)
		}
	}
	return out
}

// engineBlocks lists the blocks #OnEngine types by the engine (each
// engine types the same ones, its own or refused).
func engineBlocks(sch cue.Value) []string {
	var out []string
	engines, err := sch.LookupPath(cue.ParsePath("#OnEngine")).Fields(cue.Definitions(false))
	if err != nil || !engines.Next() {
		return nil
	}
	blocks, err := engines.Value().Fields()
	if err != nil {
		return nil
	}
	for blocks.Next() {
		out = append(out, blocks.Selector().Unquoted())
	}
	return out
}

// structElem says whether the schema's definition def (#LMEvalTask) is a
// struct, and which of its fields names one of its values ("name", or ""
// when none does): a list of them written as a string (tasks: "gsm8k") is
// fixed as [{name: "gsm8k"}], or not at all, never as a list of strings.
// Read only for such a finding: evaluating every definition up front
// cost cold vet 2% of its CPU.
func structElem(sch cue.Value, def string) (key string, isStruct bool) {
	v := sch.LookupPath(cue.ParsePath(def))
	if !v.Exists() || v.IncompleteKind() != cue.StructKind {
		return "", false
	}
	// name! is required: a constraint, which Fields lists only with
	// Optional.
	fields, err := v.Fields(cue.Optional(true))
	for err == nil && fields.Next() {
		if fields.Selector().Unquoted() == "name" {
			return "name", true
		}
	}
	return "", true
}

// collapseDisjunctions keeps one line per wrongly typed value: CUE reports
// "N errors in empty disjunction" plus one conflict per alternative of a
// defaulted field (*1 | int), which says the same thing N+1 times.
func collapseDisjunctions(in diag.List, src *sources) diag.List {
	conflict := map[string]bool{}
	for _, d := range in {
		if strings.HasPrefix(d.Message, "conflicting values") {
			conflict[d.Path] = true
		}
	}
	// The walker's "field not allowed: <why>" says more than CUE's bare
	// "field not allowed" on the same field. Any other error on a path
	// says more than "conflicting values" (which, beside a bound or a
	// schema message, is only the schema default disagreeing).
	explained := map[string]bool{}
	specific := map[string]bool{}
	twice := map[string]bool{}   // fields the user gave two values
	refused := map[string]bool{} // fields not allowed
	// A scalar where a struct goes (workloads: w: 5) lacks every required
	// field: those are consequences of the one mismatch. A struct that
	// has errors inside is the alternative meant (int | {...}): its
	// mismatch with the others is not news.
	scalar := map[string]bool{}
	inside := map[string]bool{}
	for _, d := range in {
		if structMismatch(d) && !writtenStruct(d, src) {
			scalar[d.Path] = true
		} else if d.Severity == diag.Error {
			for p := parentPath(d.Path); p != ""; p = parentPath(p) {
				inside[p] = true
			}
		}
	}
	in = slices.DeleteFunc(slices.Clone(in), func(d diag.Diagnostic) bool {
		return scalar[d.Path] && strings.HasPrefix(d.Message, "required field missing: ") ||
			inside[d.Path] && structMismatch(d)
	})
	for _, d := range in {
		if strings.HasPrefix(d.Message, "field not allowed: ") {
			explained[d.Path] = true
		}
		if strings.HasPrefix(d.Message, "field not allowed") {
			refused[d.Path] = true
		}
		if !strings.HasPrefix(d.Message, "conflicting values") && !strings.Contains(d.Message, "errors in empty disjunction") {
			specific[d.Path] = true
		}
		if explainedConflict(d.Message) {
			twice[d.Path] = true
		}
	}
	// A rule that blames a whole block (lm_eval on a bench_only workload)
	// makes the block _|_, so the values under it read as incomplete:
	// consequences, not findings.
	blamed := func(path string) bool {
		for p := range specific {
			if strings.HasPrefix(path, p+".") || strings.HasPrefix(path, p+"[") {
				return true
			}
		}
		return false
	}
	// What is written under a field that is not allowed has no type to
	// be checked against: CUE calls each of its fields not allowed too.
	underRefused := func(path string) bool {
		for p := range refused {
			if strings.HasPrefix(path, p+".") || strings.HasPrefix(path, p+"[") {
				return true
			}
		}
		return false
	}
	var out diag.List
	typeSeen := map[string]bool{}
	for _, d := range in {
		if strings.HasPrefix(d.Message, "incomplete value") && blamed(d.Path) {
			continue
		}
		if strings.HasPrefix(d.Message, "field not allowed") && underRefused(d.Path) {
			continue
		}
		if conflict[d.Path] && strings.Contains(d.Message, "errors in empty disjunction") {
			continue
		}
		if explained[d.Path] && d.Message == "field not allowed" {
			continue
		}
		if twice[d.Path] {
			// Two values written: the schema's own message (the type's
			// error() refusing the conflict) blames a value that is fine.
			if !explainedConflict(d.Message) {
				continue
			}
		} else if specific[d.Path] && strings.HasPrefix(d.Message, "conflicting values") {
			continue
		}
		if i := strings.Index(d.Message, "(mismatched types"); i >= 0 {
			key := d.Path + d.Message[i:]
			if typeSeen[key] {
				continue
			}
			typeSeen[key] = true
		}
		out = append(out, d)
	}
	return out
}

// writtenStruct reports whether d, a mismatch of a struct and a list, is
// at a struct the user wrote (concurrency: {start: 1} where a list or a
// ladder goes): its missing fields are the user's to add, not
// consequences of a wrong kind.
func writtenStruct(d diag.Diagnostic, src *sources) bool {
	m := mismatch.FindStringSubmatch(d.Message)
	if m == nil || src == nil {
		return false
	}
	r, ok := mismatchOperands(m[1], m[2], m[3], src.at(d))
	return ok && r.gotKind == "struct" && r.want == "list"
}

// structMismatch reports whether d is CUE's mismatch of a struct with a
// value of another kind.
func structMismatch(d diag.Diagnostic) bool {
	m := mismatch.FindStringSubmatch(d.Message)
	return m != nil && (m[2] == "struct") != (m[3] == "struct")
}

// parentPath is the path of the struct or list holding path's value, or
// "" at the top.
func parentPath(path string) string {
	if i := strings.LastIndexAny(path, ".["); i > 0 {
		return path[:i]
	}
	return ""
}

// undefinedField is CUE's error for a selector naming no field.
var undefinedField = regexp.MustCompile(`^undefined field: (.+)$`)

// dropLookupCascade drops a schema lookup keyed by a refused value
// (speed_bench_category: #OnDataset[dataset]... with dataset "sharegpt"):
// "undefined field: sharegpt" beside the sibling field refusing "sharegpt"
// is that refusal again.
func dropLookupCascade(in diag.List, src *sources) diag.List {
	var out diag.List
	for _, d := range in {
		m := undefinedField.FindStringSubmatch(d.Message)
		if m != nil && slices.ContainsFunc(in, func(o diag.Diagnostic) bool {
			return o.Path != d.Path && o.Severity == diag.Error && parentPath(o.Path) == parentPath(d.Path) &&
				startsWithToken(fieldLabel.ReplaceAllString(src.at(o), ""), strconv.Quote(m[1]))
		}) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// incompleteHint says what to write in place of a value the user left
// open (4 | 8, int, >=2): a job runs one value.
func incompleteHint(open string) string {
	if alts := strings.Split(open, " | "); len(alts) > 1 {
		return fmt.Sprintf(": a job runs one value, and this is a choice of %d; write one of them (%s), or mark the default (*%s)", len(alts), alts[0], open)
	}
	return ": a job runs one value, and this is a type or a bound; write a value"
}

// givenTwice joins CUE's "conflicting values a and b" to the places the
// user wrote them.
const givenTwice = ": two values are written for it, at "

// nameIsLabel is in the message of a conflict on a workload's or
// profile's name, which wlc.cue sets from its label (nameConflict).
const nameIsLabel = "'s name is its label"

// explainedConflict reports whether msg is a conflict addCUEError
// explained (a field given two values, a name that is a label): beside
// it, the schema's message for the field blames a value that is fine.
func explainedConflict(msg string) bool {
	return strings.Contains(msg, givenTwice) || strings.Contains(msg, nameIsLabel)
}

// conflictingNames are the two values of CUE's conflict on a name (names
// are plain: letters, digits, _, . and -).
var conflictingNames = regexp.MustCompile(`^conflicting values "([^"\\]*)" and "([^"\\]*)"$`)

// nameConflict explains a conflict on workloads.<label>.name (or a
// profile's): wlc.cue sets name from the label, so the other value was
// either written as a name (a literal among literals) or came with a
// value the block is built from — most often another workload
// (workloads: b: workloads.a & {...}), whose name came along. The
// schema's own message for a name ("a name must start with …") would
// blame a value that is fine; collapseDisjunctions drops it beside this.
func (l *loader) nameConflict(path []string, msg string, literals []token.Pos) (string, bool) {
	m := conflictingNames.FindStringSubmatch(msg)
	if m == nil || len(path) != 3 || path[2] != "name" || (path[0] != "workloads" && path[0] != "profiles") {
		return "", false
	}
	kind, label := strings.TrimSuffix(path[0], "s"), path[1]
	other := m[1]
	if other == label {
		other = m[2]
	}
	if len(literals) > 0 {
		return fmt.Sprintf("%s: a %s%s (%s); remove name", msg, kind, nameIsLabel, label), true
	}
	helper := "_" + other
	if !ast.IsValidIdent(helper) {
		helper = "_base"
	}
	from := "a value whose name is " + other
	if l.pkg.Exists() && l.pkg.LookupPath(cue.MakePath(cue.Str(path[0]), cue.Str(other))).Exists() {
		from = path[0] + "." + check.Label(other)
	}
	// The finding sits at the reference that brought the other name.
	return fmt.Sprintf("%s: %s.%s is built from %s, whose name came along: a %s%s, and CUE unifies values rather than overriding them; "+
		"move what they share into a hidden helper without a name (%s: {...}) and build each %s from it (%s & {...})",
		msg, path[0], check.Label(label), from, kind, nameIsLabel, helper, kind, helper), true
}

// literalAt reports whether a value literal (a number, string, bool,
// null, list or struct, not a reference) starts at p in the user's files.
func (l *loader) literalAt(p token.Pos) bool {
	found := false
	for _, f := range l.files {
		if f.Filename != p.Filename() {
			continue
		}
		ast.Walk(f, func(n ast.Node) bool {
			if found || n.Pos().Offset() > p.Offset() || n.End().Offset() <= p.Offset() {
				return false // not around p
			}
			if n.Pos() == p {
				switch x := n.(type) {
				case *ast.BasicLit, *ast.ListLit, *ast.StructLit:
					found = true
				case *ast.UnaryExpr:
					_, found = x.X.(*ast.BasicLit) // -1
				case *ast.Ident:
					found = x.Name == "true" || x.Name == "false" || x.Name == "null"
				}
			}
			return !found
		}, nil)
	}
	return found
}

// missingPackage is cue/load's error for an import nothing provides.
var missingPackage = regexp.MustCompile(`^cannot find package "([^"]+)"`)

// importCause is what made CUE's "import failed" fail (a package no
// module provides, say), which its message leaves out, with the fix: the
// schema's import path when the missing one looks like it.
func importCause(e cueerrors.Error) (string, bool) {
	var pe *load.PackageError
	if f, _ := e.Msg(); f != "import failed" || !errors.As(e, &pe) {
		return "", false
	}
	format, args := pe.Msg()
	cause := fmt.Sprintf(format, args...)
	m := missingPackage.FindStringSubmatch(cause)
	switch {
	case m == nil:
		return cause, true
	case suggest.Closest([]string{schema.ImportPath}, m[1]) != "":
		return fmt.Sprintf("cannot find package %q; the schema's import path is %q", m[1], schema.ImportPath), true
	}
	return fmt.Sprintf("cannot find package %q: no module in cue.mod provides it; check the import path (a CUE builtin is imported by its name alone, e.g. \"strings\")", m[1]), true
}

var mismatch = regexp.MustCompile(`^conflicting values (.+) \(mismatched types (\w+) and (\w+)\)$`)

// bareType reports whether a mismatch operand is a type, the wanted one.
// null is a type and its one value, so a null operand may be the user's:
// the source decides.
func bareType(s string) bool { return s != "null" && kindNames[s] != "" }

var kindNames = map[string]string{
	"int": "an integer", "float": "a number", "number": "a number", "string": "a string",
	"bool": "a bool (true or false)", "bytes": "bytes", "null": "null", "struct": "a struct", "list": "a list",
}

// plainMismatches says "must be an integer, not the string "8"" where CUE
// says "conflicting values "8" and int (mismatched types string and int)".
// Either operand may hold " and " (a string, or a struct whose
// constraints' messages say it), so every place the two may meet is a
// reading: one whose operand is a bare type (the wanted one) wins, else
// the one whose operand is the longest literal the source at the
// finding's position starts with, else the kind of the number written
// there.
//
// A value refused by each alternative of a disjunction (int | [...int])
// is one finding: "must be an integer or a list, not the string "x"",
// with the fix of a scalar alternative only (a list's elements may not
// be strings).
func plainMismatches(in diag.List, src *sources, elem func(def string) (string, bool), accepts func(path, literal string) bool) diag.List {
	type plain struct {
		first int // index in out of the value's finding
		wants []string
		r     operands
	}
	seen := map[string]*plain{}
	var order []*plain
	var out diag.List
	for _, d := range in {
		m := mismatch.FindStringSubmatch(d.Message)
		if m == nil {
			out = append(out, d)
			continue
		}
		r, ok := mismatchOperands(m[1], m[2], m[3], src.at(d))
		if !ok {
			out = append(out, d)
			continue
		}
		if e := listOf.FindStringSubmatch(r.wantText); e != nil && elem != nil {
			if key, isStruct := elem(e[1]); isStruct {
				r.elem = cmp.Or(key, "{}")
			}
		}
		if r.got == "" && r.gotKind == "struct" && r.elem == "" {
			// A struct where a list of scalars goes is no list's element
			// (nor, beside a struct alternative, surely wrong in kind).
			out = append(out, d)
			continue
		}
		key := fmt.Sprintf("%s\x00%s:%d:%d\x00%s\x00%s", d.Path, d.File, d.Line, d.Column, r.gotKind, r.got)
		if p := seen[key]; p != nil {
			if !slices.Contains(p.wants, r.want) {
				p.wants = append(p.wants, r.want)
			}
			continue
		}
		p := &plain{first: len(out), wants: []string{r.want}, r: r}
		seen[key], order = p, append(order, p)
		out = append(out, d)
	}
	for _, p := range order {
		// The scalar first: "an integer or a list".
		composite := func(kind string) int {
			if kind == "list" || kind == "struct" {
				return 1
			}
			return 0
		}
		slices.SortStableFunc(p.wants, func(a, b string) int { return cmp.Compare(composite(a), composite(b)) })
		var names []string
		fix := ""
		for _, w := range p.wants {
			names = append(names, kindNames[w])
			r := p.r
			r.want = w
			if f := r.fix(); f != "" && fix == "" && (w != "list" || len(p.wants) == 1) && (accepts == nil || accepts(out[p.first].Path, f)) {
				fix = f
			}
		}
		out[p.first].Message = p.r.message(strings.Join(names, " or "), fix)
	}
	return out
}

// operands is one reading of a mismatch: the user's operand and kind, and
// the wanted kind.
type operands struct {
	got, gotKind, want string
	// wantText is the wanted operand as CUE prints it ([...#LMEvalTask]).
	wantText string
	// elem is a wanted list's struct element: its naming field, "{}" for
	// one without, "" for a scalar element (see structElem).
	elem string
}

// listOf is the definition a list type's elements are ([...#X], or
// [#X,...#X] for a non-empty one).
var listOf = regexp.MustCompile(`^\[(?:#\w+,)?\.\.\.(#\w+)\]$`)

// message says the value is not what is wanted (a kind's words), and the
// fix, if any.
func (r operands) message(want, fix string) string {
	switch {
	case r.gotKind == "null":
		return fmt.Sprintf("must be %s, not null", want)
	case r.got == "" && (r.gotKind == "struct" || r.gotKind == "list"):
		// Not read from the source (CUE prints a composite value its own
		// way, whole, on one line): its kind says enough.
		msg := fmt.Sprintf("must be %s, not %s", want, kindNames[r.gotKind])
		if r.gotKind == "struct" && want == kindNames["list"] {
			msg += "; write it in brackets, the list's one element: [{...}]"
		}
		return msg
	}
	msg := fmt.Sprintf("must be %s, not the %s %s", want, r.gotKind, r.got)
	if fix != "" {
		msg += "; write " + fix
	}
	return msg
}

// mismatchOperands reads which operand of a mismatch is the user's value
// (see plainMismatches).
func mismatchOperands(values, ka, kb, src string) (operands, bool) {
	type split struct{ a, b string }
	var splits []split
	for at := 0; ; at++ {
		j := strings.Index(values[at:], " and ")
		if j < 0 {
			break
		}
		at += j
		splits = append(splits, split{values[:at], values[at+len(" and "):]})
	}
	var r *operands
	for _, sp := range splits {
		if bareType(sp.b) {
			r = &operands{got: sp.a, gotKind: ka, want: kb, wantText: sp.b}
			break
		}
		if bareType(sp.a) {
			r = &operands{got: sp.b, gotKind: kb, want: ka, wantText: sp.a}
			break
		}
	}
	if r == nil {
		for _, sp := range splits {
			if startsWithToken(src, sp.a) && (r == nil || len(sp.a) > len(r.got)) {
				r = &operands{got: sp.a, gotKind: ka, want: kb, wantText: sp.b}
			}
			if startsWithToken(src, sp.b) && (r == nil || len(sp.b) > len(r.got)) {
				r = &operands{got: sp.b, gotKind: kb, want: ka, wantText: sp.a}
			}
		}
	}
	if r == nil && strings.HasPrefix(src, "'''") {
		// A multi-line bytes literal: CUE prints its value on one line,
		// so the source cannot match it; the bytes operand is the user's.
		quoted := func(s string) bool { return len(s) > 1 && s[0] == '\'' && s[len(s)-1] == '\'' }
		for _, sp := range splits {
			if ka == "bytes" && quoted(sp.a) {
				r = &operands{got: sp.a, gotKind: ka, want: kb, wantText: sp.b}
				break
			}
			if kb == "bytes" && quoted(sp.b) {
				r = &operands{got: sp.b, gotKind: kb, want: ka, wantText: sp.a}
				break
			}
		}
	}
	if r == nil && (ka == "struct") != (kb == "struct") && (ka == "list" || kb == "list") {
		// A struct where a list goes, or a list where a struct goes: CUE
		// prints the user's composite value its own way, so the source's
		// first character says which operand it is.
		for _, sp := range splits {
			switch {
			case strings.HasPrefix(src, "{") && ka == "struct" && strings.HasPrefix(sp.b, "["):
				r = &operands{gotKind: ka, want: kb, wantText: sp.b}
			case strings.HasPrefix(src, "{") && kb == "struct" && strings.HasPrefix(sp.a, "["):
				r = &operands{gotKind: kb, want: ka, wantText: sp.a}
			case strings.HasPrefix(src, "[") && ka == "list" && strings.HasPrefix(sp.b, "{"):
				r = &operands{gotKind: ka, want: kb, wantText: sp.b}
			case strings.HasPrefix(src, "[") && kb == "list" && strings.HasPrefix(sp.a, "{"):
				r = &operands{gotKind: kb, want: ka, wantText: sp.a}
			default:
				continue
			}
			break
		}
	}
	written := numberAt(src)
	if r == nil && written != "" {
		// CUE prints the user's number its own way (1e12 as 1E+12):
		// the operand of the written literal's kind is the user's.
		kind := "int"
		if strings.ContainsAny(written, ".eE") {
			kind = "float"
		}
		switch kind {
		case ka:
			r = &operands{gotKind: ka, want: kb}
		case kb:
			r = &operands{gotKind: kb, want: ka}
		}
	}
	if r == nil || kindNames[r.want] == "" {
		return operands{}, false
	}
	if written != "" && (r.gotKind == "int" || r.gotKind == "float") {
		r.got = written // as written: 8e0, not CUE's 8
	}
	return *r, true
}

// fix is the literal of the wanted kind the user's value meant, where one
// follows from it: a number or bool quoted ("8" for an integer: 8), a
// scalar unquoted for a string (8 for a string: "8"), a string for a list
// (its words, one an element: ["--enforce-eager"]); else "".
func (r operands) fix() string {
	str, isStr := "", false
	if r.gotKind == "string" {
		if u, err := strconv.Unquote(r.got); err == nil {
			str, isStr = u, true
		}
	}
	switch r.want {
	case "string":
		if r.gotKind == "int" || r.gotKind == "float" || r.gotKind == "bool" {
			return strconv.Quote(r.got)
		}
	case "int":
		if _, err := strconv.ParseInt(strings.ReplaceAll(str, "_", ""), 10, 64); isStr && err == nil {
			return str
		}
		if f, err := strconv.ParseFloat(r.got, 64); r.gotKind == "float" && err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return strconv.FormatInt(int64(f), 10) // 8.0 is a float in CUE
		}
	case "float", "number":
		if _, err := strconv.ParseFloat(str, 64); isStr && err == nil && numberAt(str) == str {
			return str
		}
	case "bool":
		if isStr && (str == "true" || str == "false") {
			return str
		}
	case "struct":
		// A list's element written as its name alone ("gsm8k" for
		// {name: "gsm8k"}): a struct whose first field is a required name.
		if isStr && str != "" && strings.HasPrefix(r.wantText, "{name!:") {
			return fmt.Sprintf("{name: %s}", strconv.Quote(str))
		}
	case "list":
		switch r.elem {
		case "":
		case "{}":
			return "" // no field names an element: nothing follows from a string
		default:
			if isStr && str != "" {
				return fmt.Sprintf("[{%s: %s}]", r.elem, strconv.Quote(str))
			}
			return ""
		}
		if isStr {
			var elems []string
			for _, w := range strings.Fields(str) {
				elems = append(elems, strconv.Quote(w))
			}
			if len(elems) > 0 {
				return "[" + strings.Join(elems, ", ") + "]"
			}
		}
	}
	return ""
}

// startsWithToken reports whether src starts with the literal tok whole:
// 1e12 does not start with the token 1 (CUE's default *1 beside it).
func startsWithToken(src, tok string) bool {
	rest, ok := strings.CutPrefix(src, tok)
	if !ok || src == "" {
		return false
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return rest == "" || !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("._+-", r))
}

// numberAt is the number literal src starts with, or "".
func numberAt(src string) string {
	end := strings.IndexFunc(src, func(r rune) bool {
		return !(unicode.IsDigit(r) || strings.ContainsRune("._+-eExXoObBabcdefABCDEF", r))
	})
	if end < 0 {
		end = len(src)
	}
	tok := src[:end]
	if _, err := strconv.ParseFloat(strings.ReplaceAll(tok, "_", ""), 64); err != nil || tok == "" {
		return ""
	}
	return tok
}

// singleServerRules are the schema rules (_check.<blame>.<rule>) about one
// vLLM server's parallel sizes, which a disaggregated workload's instances
// replace and a custom_job runs without. They are guarded by disagg ==
// _|_ and custom_job == _|_ in the schema, but CUE also calls a block that
// fails to evaluate (a bad value inside it) _|_, so they would fire beside
// that error and blame fields the user did right.
var singleServerRules = map[string]bool{
	"gpus_per_node.parallelism":          true,
	"serve.tensor_parallel_size.divides": true,
	"nodes.idle":                         true,
	"idle_gpus.count.parallelism":        true,
	"idle_gpus.reason.blank":             true,
}

// singleServerRuleBeside reports whether path is a single-server rule of a
// workload whose source has a disagg or a custom_job block.
func (l *loader) singleServerRuleBeside(path []string) bool {
	i := indexOf(path, "_check")
	if i != 2 || len(path) < 5 || path[0] != "workloads" {
		return false
	}
	if !singleServerRules[strings.Trim(path[3], `"`)+"."+path[4]] {
		return false
	}
	for _, block := range []string{"disagg", "custom_job"} {
		if l.labelPos([]cue.Selector{cue.Str("workloads"), cue.Str(path[1]), cue.Str(block)}).IsValid() {
			return true
		}
	}
	return false
}
