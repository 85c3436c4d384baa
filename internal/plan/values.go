package plan

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// The rules below are wlc's own check of the values it writes into files,
// shell words, container names, #SBATCH lines and YAML keys. The schema
// states most of them too, but a package can type its workloads loosely
// (wlc.cue is the user's), so vet applies these in Go to every value
// whatever the package's typing says (internal/load), Resolve applies
// them again before any backend sees a plan, and the backends quote every
// value anyway.

var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// MaxName bounds a name: it becomes one path component with a prefix and
// a suffix around it (bench-<name>-conc-<n>.json, wlc-<name>-<job id>),
// and a component longer than the filesystem's NAME_MAX (255 bytes) fails
// the job on the host, hours after vet.
const MaxName = 128

// CheckName refuses a value that becomes part of a file or directory name,
// a container name or a YAML key: letters, digits, _, . and -, starting
// with a letter or digit, no "..", at most MaxName bytes.
func CheckName(s string) error {
	if !namePattern.MatchString(s) || strings.Contains(s, "..") {
		return fmt.Errorf("%s is not a name: a name must start with a letter or digit and use only letters, digits, _, . and - (no ..), because it becomes part of file names, container names and YAML keys", quoteValue(s))
	}
	if len(s) > MaxName {
		return fmt.Errorf("%s is %d bytes long; a name becomes part of file names (at most 255 bytes each on the host), so keep it to %d", quoteValue(s), len(s), MaxName)
	}
	return nil
}

var envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// MaxEnvName bounds a variable name. Slurm copies a job's environment into
// each srun step through a 256-byte name buffer and drops a longer name
// without a word (src/common/env.c), so the server step would run without
// the variable.
const MaxEnvName = 255

// CheckEnvName refuses a variable name a shell cannot assign, or one too
// long to reach a Slurm step.
func CheckEnvName(s string) error {
	if !envNamePattern.MatchString(s) {
		return fmt.Errorf("%s is not a variable name: use letters, digits and _, not starting with a digit", quoteValue(s))
	}
	if len(s) > MaxEnvName {
		return fmt.Errorf("%s is %d bytes long; Slurm drops a variable whose name is longer than %d from every step's environment without a word, so keep it to %d", quoteValue(s), len(s), MaxEnvName, MaxEnvName)
	}
	return nil
}

// MaxValue bounds one value: Linux refuses to start a program one of
// whose argument or environment strings (NAME=value with its NUL) is
// longer than MAX_ARG_STRLEN, 32 pages of 4 KiB, and every value wlc
// writes reaches some exec as one such string (a server or client
// option, an env entry, docker's -e NAME=value).
const MaxValue = 128<<10 - MaxEnvName - 2

// CheckLength refuses a value too long to pass through exec.
func CheckLength(s string) error {
	if len(s) > MaxValue {
		return fmt.Errorf("this value is %d bytes long; Linux refuses to start a program one of whose arguments or environment strings is longer than 128 KiB (MAX_ARG_STRLEN, \"Argument list too long\"), so the job would fail where the value is passed; keep it to %d bytes (a long text belongs in a file the job reads)", len(s), MaxValue)
	}
	return nil
}

// CheckWord refuses a value placed where a command could read it as an
// option (an image before the model, a path, a name): it must not start
// with "-", and must be one line.
func CheckWord(s string) error {
	if strings.HasPrefix(s, "-") {
		return fmt.Errorf("%s starts with -, so the command it is passed to would read it as an option; remove the leading -", quoteValue(s))
	}
	return CheckLine(s)
}

// lmEvalUnsafe is lm_eval's sanitize_model_name pattern: each run of
// these becomes "__" in the directory it names after the model.
var lmEvalUnsafe = regexp.MustCompile(`["<>:/|\\?*\[\]]+`)

// CheckModel refuses a model id that is not a word (CheckWord) or that
// lm_eval and BFCL could not name their results directory after: lm_eval
// writes under <output>/<model, sanitized>/, one path component of at
// most 255 bytes (NAME_MAX), so a longer id fails every eval on the host.
func CheckModel(s string) error {
	if err := CheckWord(s); err != nil {
		return err
	}
	if n := len(lmEvalUnsafe.ReplaceAllString(s, "__")); n > 255 {
		return fmt.Errorf("%s is too long: lm_eval and BFCL name a results directory after the model id (%d bytes once its / are __; at most 255 on the host); serve it from a shorter path", quoteValue(s), n)
	}
	return nil
}

// CheckImage refuses an image reference that is not one word.
func CheckImage(s string) error {
	if err := CheckWord(s); err != nil {
		return err
	}
	if i := strings.IndexFunc(s, unicode.IsSpace); i >= 0 || s == "" {
		return fmt.Errorf("%s is not an image reference: it is empty or holds whitespace", quoteValue(s))
	}
	return nil
}

// CheckLine refuses control characters (a newline ends a comment, an
// #SBATCH line or a YAML scalar early; others corrupt logs and terminals).
func CheckLine(s string) error {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return fmt.Errorf("%s holds the control character %U; values must be one line of printable text", quoteValue(s), r)
		}
	}
	return nil
}

// CheckArg refuses what no argv entry or environment value can carry (a
// NUL byte). Everything else is passed verbatim: the backends quote each
// such value as one word ($'…' for newlines and control characters).
func CheckArg(s string) error {
	if strings.IndexByte(s, 0) >= 0 {
		return fmt.Errorf("%s holds a NUL byte, which no command-line argument or environment value can carry", quoteValue(s))
	}
	return nil
}

// CheckText is CheckLine for values that may span lines (a custom step's
// script): newlines and tabs allowed, other control characters not.
func CheckText(s string) error {
	for _, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return fmt.Errorf("%s holds the control character %U", quoteValue(s), r)
		}
	}
	return nil
}

// Credentials recognised by the shape of their value. CredentialValue
// runs on every string of every workload: each shape is tried only on a
// value holding one of the literal strings its matches start with
// (literalStarts), where running the eight regexps on every value was 1%
// of a cold vet.
var credentialShapes = []credentialShape{
	newCredentialShape(`\bhf_[A-Za-z0-9]{30,}`, "a Hugging Face token (hf_…)"),
	newCredentialShape(`\bgh[pousr]_[A-Za-z0-9]{30,}`, "a GitHub token (ghp_…)"),
	newCredentialShape(`\bgithub_pat_[A-Za-z0-9_]{30,}`, "a GitHub token (github_pat_…)"),
	newCredentialShape(`\b(AKIA|ASIA)[0-9A-Z]{16}\b`, "an AWS access key id (AKIA…)"),
	newCredentialShape(`\bsk-(proj-|ant-)?[A-Za-z0-9_-]{20,}`, "an API key (sk-…)"),
	newCredentialShape(`\bxox[abprs]-[A-Za-z0-9-]{10,}`, "a Slack token (xox…)"),
	newCredentialShape(`\bbkua_[A-Za-z0-9]{30,}`, "a Buildkite token (bkua_…)"),
	newCredentialShape(`-----BEGIN [A-Z ]*PRIVATE KEY-----`, "a private key"),
}

type credentialShape struct {
	re     *regexp.Regexp
	starts []string // every match starts with one of them (nil: unknown)
	what   string
}

func newCredentialShape(expr, what string) credentialShape {
	return credentialShape{re: regexp.MustCompile(expr), starts: literalStarts(expr), what: what}
}

// matches is re.MatchString, skipped when s holds none of the starts.
func (c credentialShape) matches(s string) bool {
	if c.starts != nil && !slices.ContainsFunc(c.starts, func(p string) bool { return strings.Contains(s, p) }) {
		return false
	}
	return c.re.MatchString(s)
}

// CredentialValue says what credential s looks like, or "".
func CredentialValue(s string) string {
	for _, c := range credentialShapes {
		if c.matches(s) {
			return c.what
		}
	}
	return ""
}

// literalStarts returns strings one of which starts every match of expr:
// its leading literals, read from the parsed pattern past empty-width
// assertions (\b, ^), with small character classes, groups and
// alternations expanded; nil when the pattern starts otherwise.
func literalStarts(expr string) []string {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	starts, _ := expandStarts(re.Simplify())
	if len(starts) == 0 || slices.Contains(starts, "") {
		return nil
	}
	return starts
}

// expandStarts returns the literal starts of re's matches and whether
// they are whole matches (so that what follows re extends them).
func expandStarts(re *syntax.Regexp) (starts []string, whole bool) {
	const most = 8 // past a few, the strings.Contains cost the regexp's
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpWordBoundary, syntax.OpBeginLine, syntax.OpBeginText:
		return []string{""}, true
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return nil, false
		}
		return []string{string(re.Rune)}, true
	case syntax.OpCharClass:
		var out []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				if len(out) == most {
					return nil, false
				}
				out = append(out, string(r))
			}
		}
		return out, true
	case syntax.OpCapture:
		return expandStarts(re.Sub[0])
	case syntax.OpAlternate:
		var out []string
		whole := true
		for _, sub := range re.Sub {
			s, w := expandStarts(sub)
			if s == nil {
				return nil, false
			}
			out = append(out, s...)
			whole = whole && w
		}
		if len(out) > most {
			return nil, false
		}
		// Each branch's starts begin its matches; when one branch's are
		// only prefixes, what follows cannot extend any of them.
		return out, whole
	case syntax.OpConcat:
		out := []string{""}
		for _, sub := range re.Sub {
			s, w := expandStarts(sub)
			if s == nil || len(out)*len(s) > most {
				return out, false
			}
			var next []string
			for _, a := range out {
				for _, b := range s {
					next = append(next, a+b)
				}
			}
			out = next
			if !w {
				return out, false
			}
		}
		return out, true
	}
	return nil, false
}

var credentialName = regexp.MustCompile(`(?i)(^|_)(TOKEN|SECRET|PASSWORD|PASSWD|APIKEY|API_KEY|KEY|CREDENTIALS?)$|^AWS_ACCESS_KEY_ID$|^(AWS|GOOGLE|AZURE)_.*(KEY|SECRET|CREDENTIALS?)`)

// CredentialName reports whether a variable name is a credential's
// (HF_TOKEN, HUGGING_FACE_HUB_TOKEN, GITHUB_TOKEN, AWS_ACCESS_KEY_ID, any
// *_TOKEN, *_SECRET, *_KEY, *_PASSWORD): its value must come from the
// job's environment by name, never be written into a file.
func CredentialName(name string) bool { return credentialName.MatchString(name) }

// RunnerOwned reports whether a variable name belongs to the job scripts
// wlc generates (WLC_*): setting it in env would replace the runner's own
// (WLC_RESULTS_PY the result checker, WLC_HOST the health check's host).
func RunnerOwned(name string) bool { return strings.HasPrefix(strings.ToUpper(name), "WLC_") }

// CredentialOptions are command-line options that carry a credential;
// model_args keys likewise. The variable to declare as a secret instead is
// named.
var (
	CredentialOptions = map[string]string{
		"--hf-token": "HF_TOKEN",
		"--api-key":  "VLLM_API_KEY",
	}
	// OwnedModelArgs are the model_args keys wlc sets itself, with what
	// they hold: one a workload gave would be dropped (lm_eval takes model
	// over pretrained).
	OwnedModelArgs = map[string]string{
		"model":      "the served model (the workload's model)",
		"pretrained": "the served model (lm_eval takes model, which wlc sets, over pretrained)",
		"base_url":   "the address of the server the job starts",
	}
	CredentialModelArgs = map[string]string{
		"api_key":    "OPENAI_API_KEY",
		"token":      "HF_TOKEN",
		"hf_token":   "HF_TOKEN",
		"auth_token": "HF_TOKEN",
	}
)

// quoteValue shows a value in a message: quoted, long ones cut.
func quoteValue(s string) string {
	if r := []rune(s); len(r) > 60 {
		return fmt.Sprintf("%q…", string(r[:57]))
	}
	return fmt.Sprintf("%q", s)
}

// checkPlanValues is the last check before a backend sees a plan: the
// values that become file and container names, and the image, which an
// export-time variable (VLLM_IMAGE, SGLANG_IMAGE, …) may have replaced
// after vet.
func checkPlanValues(p Workload) error {
	if err := CheckName(p.Name); err != nil {
		return err
	}
	// The run's name (dashboard_name, else the name) names its results
	// directory and its dashboard rows.
	if err := CheckName(p.RunName); err != nil {
		return fmt.Errorf("dashboard_name: %w", err)
	}
	if err := CheckModel(p.Model); err != nil {
		return fmt.Errorf("model: %w", err)
	}
	if p.Image.Skip == "" {
		for _, ref := range []string{p.Image.Ref, p.Image.Pull} {
			if ref == "" {
				continue
			}
			if err := CheckImage(ref); err != nil {
				return fmt.Errorf("image (from %s): %w", p.Image.Source, err)
			}
		}
	}
	for _, r := range p.Bench {
		if err := CheckName(r.Name); err != nil {
			return fmt.Errorf("bench run: %w", err)
		}
	}
	for _, c := range p.Custom {
		if err := CheckName(c.Name); err != nil {
			return fmt.Errorf("custom step: %w", err)
		}
	}
	for _, r := range p.LMEval {
		if err := CheckName(r.Task); err != nil {
			return fmt.Errorf("lm_eval task: %w", err)
		}
	}
	if p.Sweep != nil {
		for _, r := range p.Sweep.Runs {
			if err := CheckName(r.Backend); err != nil {
				return fmt.Errorf("backend sweep: %w", err)
			}
		}
	}
	return nil
}

// modelArgKinds are the kinds lm_eval's local-completions model
// (TemplateAPI) needs of its model_args: it int()s the counts and lengths
// (max_length - 1 fails on None) and takes the switches as Python truth, so
// a word there ("no") reads as true. lm_eval parses each value with
// handle_arg_string: "true"/"false" in any case are bools, numerals are
// numbers, anything else stays a string, "None" included.
var modelArgKinds = map[string]string{
	"num_concurrent": "int", "max_retries": "int", "max_gen_toks": "int", "seed": "int",
	"timeout": "int", "max_length": "int", "max_images": "int",
	"truncate": "bool", "add_bos_token": "bool", "tokenized_requests": "bool",
	"trust_remote_code": "bool", "use_fast_tokenizer": "bool", "verify_certificate": "bool",
	"tokenizer_backend": "backend",
}

// CheckModelArg says why model_args key k cannot have value v: wlc sets
// the key itself, or lm_eval cannot use v as the key's kind; else "" (keys
// lm_eval does not type are its own business).
func CheckModelArg(k string, v any) string {
	if what, ok := OwnedModelArgs[k]; ok {
		return fmt.Sprintf("model_args %s is set by wlc to %s; remove it", k, what)
	}
	switch modelArgKinds[k] {
	case "int":
		switch x := v.(type) {
		case int64:
			return ""
		case float64:
			if x == float64(int64(x)) {
				return ""
			}
		case string:
			if isNumeral(x) {
				return ""
			}
		}
		return fmt.Sprintf("model_args %s must be an integer (lm_eval takes int() of it), not %s", k, cueLiteral(v))
	case "bool":
		if _, ok := v.(bool); ok {
			return ""
		}
		if s, ok := v.(string); ok && (strings.EqualFold(s, "true") || strings.EqualFold(s, "false")) {
			return ""
		}
		return fmt.Sprintf("model_args %s must be true or false (lm_eval reads any other value by Python truth), not %s", k, cueLiteral(v))
	case "backend":
		switch v {
		case nil, "huggingface", "tiktoken", "remote", "None", "none":
			return ""
		}
		return fmt.Sprintf("model_args tokenizer_backend must be huggingface, tiktoken, remote or null, not %s", cueLiteral(v))
	}
	return ""
}

// isNumeral is Python's str.isnumeric for ASCII: lm_eval makes an int of it.
func isNumeral(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

// cueLiteral shows a model_args value as the user wrote it (pyLiteral is
// how lm_eval is given it).
func cueLiteral(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(x)
	default:
		return fmt.Sprint(x)
	}
}
