package check

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/internal/engine/cmdline"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/schema"
)

// The Go check of every string value a workload or profile gives (see
// plan/values.go for the rules and why): it walks the decoded value, so
// a field added to the schema is covered the day it is added, and each
// finding points at the user's field.

// valueRule is how a field's strings are checked, by the field's pattern:
// its JSON path with [] for list indexes and * for map keys.
type valueRule int

const (
	ruleWord      valueRule = iota // default: one line, no leading -
	ruleName                       // a file, directory, container name or YAML key part
	ruleImage                      // an image reference
	ruleArg                        // an argv token or a map value, quoted as one word: anything but NUL
	ruleMultiline                  // a script
	ruleEnvName                    // a variable name
	rulePath                       // a host or container path: absolute, one word (enroot's fstab line, docker -v)
	ruleEnum                       // one of the values a backend branches on (enums below)
	ruleModel                      // a model id: a word lm_eval and BFCL can name a directory after
)

var valueRules = map[string]valueRule{
	"name":                              ruleName,
	"dashboard_name":                    ruleName,
	"custom_steps[].name":               ruleName,
	"vllm_bench.configs[].name":         ruleName,
	"sglang_bench.configs[].name":       ruleName,
	"lm_eval.tasks[].name":              ruleName,
	"backend_sweep.attention[]":         ruleName,
	"backend_sweep.moe[]":               ruleName,
	"bfcl.test_categories[]":            ruleName,
	"model":                             ruleModel,
	"image":                             ruleImage,
	"image_repo":                        ruleImage,
	"slurm.pyxis.image":                 ruleImage,
	"slurm.pyxis.mounts[].source":       rulePath,
	"slurm.pyxis.mounts[].target":       rulePath,
	"slurm.pyxis.workdir":               rulePath,
	"hf_home":                           rulePath,
	"custom_steps[].where":              ruleEnum,
	"engine":                            ruleEnum,
	"runtime":                           ruleEnum,
	"serve.extra_args[]":                ruleArg,
	"sglang.extra_args[]":               ruleArg,
	"disagg.prefill.serve.extra_args[]": ruleArg,
	"disagg.decode.serve.extra_args[]":  ruleArg,
	"disagg.router.extra_args[]":        ruleArg,
	"disagg.router.command[]":           ruleArg,
	"custom_steps[].command[]":          ruleArg,
	"custom_job.command[]":              ruleArg,
	"custom_job.script":                 ruleMultiline,
	"custom_job.where":                  ruleEnum,
	"custom_steps[].script":             ruleMultiline,
	"slurm.extra_sbatch_args[]":         ruleArg,
	"slurm.extra_srun_args[]":           ruleArg,
	"description":                       ruleArg,
	"idle_gpus.reason":                  ruleArg,
	"secrets[]":                         ruleEnvName,
}

// enums are the choices the backends branch on; a loosely typed package
// must not reach a backend's fallback branch with anything else.
var enums = map[string][]string{
	"custom_steps[].where": {"server", "host"},
	"custom_job.where":     {"gpus", "host"},
	"engine":               {schema.EngineVLLM, schema.EngineSGLang},
	"runtime":              {"docker", "k8s", "slurm"},
}

// valueSite is one string the walk found.
type valueSite struct {
	walk    *stringWalk // path() renders where the walk is
	pattern string      // rule key: env.*, custom_steps[].name
	key     bool        // the string is a map key (the last element of path)
	inMap   bool        // the string is a map value
	s       string
}

// path is the site's CUE path for positions: env."A B", custom_steps[0].name.
// Rendered on demand (only a finding needs it): building every field's
// path was half of the walk's cost.
func (s valueSite) path() string { return s.walk.path() }

// stringWalk walks every string of a value (struct fields by JSON name,
// list elements, map keys and values) in a stable order, keeping the path
// of the current value as elements: a field name, a quoted map key or an
// index.
type stringWalk struct {
	f     func(valueSite)
	elems []pathElem
}

type pathElem struct {
	label string // a field or map key as a path label; "" for an index
	index int
}

func (w *stringWalk) path() string {
	var b strings.Builder
	for _, e := range w.elems {
		if e.label == "" {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(e.index))
			b.WriteByte(']')
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(e.label)
	}
	return b.String()
}

// walkStrings calls f for every string in v, in a stable order.
func walkStrings(v reflect.Value, f func(valueSite)) {
	w := &stringWalk{f: f}
	w.walk(v, "", false)
}

// walk visits v, whose rule pattern is pattern; mapValue says v is a map's
// value (through pointers and interfaces).
func (w *stringWalk) walk(v reflect.Value, pattern string, mapValue bool) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			w.walk(v.Elem(), pattern, mapValue)
		}
	case reflect.String:
		w.f(valueSite{walk: w, pattern: pattern, inMap: mapValue, s: v.String()})
	case reflect.Struct:
		t := v.Type()
		for i, sf := range jsonFields(t) {
			if sf.skip {
				continue
			}
			if sf.name == "" { // embedded or untagged: same level
				w.walk(v.Field(i), pattern, mapValue)
				continue
			}
			w.elems = append(w.elems, pathElem{label: sf.name})
			w.walk(v.Field(i), joinPattern(pattern, sf.name), false)
			w.elems = w.elems[:len(w.elems)-1]
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			w.elems = append(w.elems, pathElem{index: i})
			w.walk(v.Index(i), pattern+"[]", false)
			w.elems = w.elems[:len(w.elems)-1]
		}
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		kp := joinPattern(pattern, "*")
		for _, k := range keys {
			if k.Kind() != reflect.String {
				continue
			}
			w.elems = append(w.elems, pathElem{label: pathLabel(k.String())})
			w.f(valueSite{walk: w, pattern: kp, key: true, s: k.String()})
			w.walk(v.MapIndex(k), kp, true)
			w.elems = w.elems[:len(w.elems)-1]
		}
	}
}

// joinPattern appends a field name (or * for a map's entries) to a rule
// pattern.
func joinPattern(pattern, name string) string {
	if pattern == "" {
		return name
	}
	return pattern + "." + name
}

// jsonField is a struct field as the walk sees it: its JSON name ("" for
// an embedded or untagged field, walked at the same level), or skipped
// (unexported, json:"-", or a type that holds no string).
type jsonField struct {
	name string
	skip bool
}

var jsonFieldsCache sync.Map // reflect.Type -> []jsonField

// jsonFields reads t's fields once per type.
func jsonFields(t reflect.Type) []jsonField {
	if c, ok := jsonFieldsCache.Load(t); ok {
		return c.([]jsonField)
	}
	out := make([]jsonField, t.NumField())
	for i := range out {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		out[i] = jsonField{name: name, skip: !sf.IsExported() || name == "-" || !holdsStrings(sf.Type)}
	}
	jsonFieldsCache.Store(t, out)
	return out
}

// holdsStrings reports whether a value of type t can hold a string (a
// number or bool field has nothing to walk).
func holdsStrings(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return false
	}
	return true
}

// pathLabel writes a map key as a CUE path element: quoted unless a plain
// identifier (an unquoted _x or #x would name a hidden field or a
// definition).
func pathLabel(s string) string {
	if plainIdent.MatchString(s) {
		return s
	}
	return strconv.Quote(s)
}

var plainIdent = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// isEnvMap reports whether pattern is an env map's key or value.
func isEnvMap(pattern string) bool {
	return pattern == "env.*" || strings.HasSuffix(pattern, ".env.*")
}

func isModelArgs(pattern string) bool {
	return strings.HasSuffix(pattern, "model_args.*")
}

// WorkloadValues applies every value rule to a decoded workload (without
// positions), for callers that build workloads in Go (the lowering fuzz
// target).
func WorkloadValues(w *schema.Workload) []Diagnostic {
	out := valueFindings(w, w.Secrets)
	return append(out, argvFindings(w, 0)...)
}

// ProfileValues is WorkloadValues for a profile.
func ProfileValues(p *schema.Profile) []Diagnostic { return valueFindings(p, p.Secrets) }

// valueFinding is a value rule's finding.
func valueFinding(path, msg string) Diagnostic {
	return Diagnostic{Path: path, Severity: diag.Error, Message: msg, Value: true}
}

// valueFindings walks every string of val. Names in secrets are reported
// by the secrets rule, not again here.
func valueFindings(val any, secrets []string) []Diagnostic {
	var out []Diagnostic
	errf := func(s valueSite, format string, args ...any) {
		field := s.path()
		if s.pattern == "name" {
			field = "" // the workload's label
		}
		out = append(out, valueFinding(field, fmt.Sprintf(format, args...)))
	}
	walkStrings(reflect.ValueOf(val), func(s valueSite) {
		if s.s == "" && s.pattern != "name" {
			return // an optional field left out decodes as ""
		}
		if err := plan.CheckLength(s.s); err != nil {
			errf(s, "%v", err)
			return
		}
		if what := plan.CredentialValue(s.s); what != "" {
			errf(s, "this value looks like %s; a credential must not be written into generated files: declare the variable that holds it in secrets (it is passed by name from the job's environment) and remove the value", what)
			return
		}
		switch {
		case s.key && isEnvMap(s.pattern):
			if err := plan.CheckEnvName(s.s); err != nil {
				errf(s, "%v", err)
			} else if plan.RunnerOwned(s.s) {
				errf(s, "%s is a variable of the job script wlc generates (WLC_*); setting it in env would replace the runner's own; remove it", s.s)
			} else if plan.CredentialName(s.s) && !slices.Contains(secrets, s.s) {
				errf(s, "%s names a credential; its value must not be written into generated files: remove it from env and add %q to secrets (passed by name from the job's environment)", s.s, s.s)
			}
			return
		case s.key && isModelArgs(s.pattern):
			if want, ok := plan.CredentialModelArgs[s.s]; ok {
				errf(s, "model_args %s carries a credential into the generated command; remove it and declare %s in secrets (lm_eval reads it from the environment)", s.s, want)
				return
			}
		case s.inMap && isModelArgs(s.pattern) && strings.Contains(s.s, ","):
			errf(s, "lm_eval reads model_args as key=value pairs separated by commas, so the comma in %q would start another argument; remove it", s.s)
			return
		}
		rule, ok := valueRules[s.pattern]
		if !ok && (s.inMap || s.key) {
			rule = ruleArg // map values (env, args, metadata, configs) follow an option or a name
		}
		if s.key && !isEnvMap(s.pattern) {
			rule = ruleWord
		}
		var err error
		switch rule {
		case ruleWord:
			err = plan.CheckWord(s.s)
		case ruleName:
			err = plan.CheckName(s.s)
		case ruleImage:
			err = plan.CheckImage(s.s)
		case ruleModel:
			err = plan.CheckModel(s.s)
		case ruleArg:
			err = plan.CheckArg(s.s)
		case ruleMultiline:
			err = plan.CheckText(s.s)
		case ruleEnvName:
			err = plan.CheckEnvName(s.s)
		case rulePath:
			if err = plan.CheckWord(s.s); err == nil && !strings.HasPrefix(s.s, "/") {
				err = fmt.Errorf("%q is not an absolute path; write it from /", s.s)
			} else if err == nil && strings.ContainsAny(s.s, " \t,:") {
				err = fmt.Errorf("%q holds whitespace, a comma or a colon, which split Pyxis's --container-mounts list (SRC:DST[:FLAGS],…), docker's -v SRC:DST and enroot's fstab line; use a path without them", s.s)
			}
		case ruleEnum:
			if !slices.Contains(enums[s.pattern], s.s) {
				err = fmt.Errorf("%q is not one of %s", s.s, strings.Join(enums[s.pattern], ", "))
			}
		}
		if err != nil {
			errf(s, "%v", err)
		}
	})
	return out
}

// argvFindings refuses argv tokens that carry a credential or rename the
// served model (the readiness check and every client ask for model). The
// first skip serve.extra_args are a recipe's, checked where derived.
func argvFindings(w *schema.Workload, skip int) []Diagnostic {
	var out []Diagnostic
	check := func(field string, args []string, resolve bool) {
		for i, tok := range args {
			opt, _, _ := strings.Cut(tok, "=")
			if resolve {
				if m, ok := cmdline.VLLMServe.Resolve(tok); ok {
					opt = m.Option
				}
			}
			at := fmt.Sprintf("%s[%d]", field, i)
			if secret, ok := plan.CredentialOptions[opt]; ok {
				out = append(out, valueFinding(at, fmt.Sprintf("%s passes a credential on the command line, which is written into generated files; remove it and add %s to secrets (the server reads it from the environment)", tok, secret)))
			}
			if opt == "--served-model-name" {
				out = append(out, valueFinding(at, fmt.Sprintf("%s renames the model the server answers to, but the readiness check and every client (bench, lm_eval, bfcl) ask for model %q; remove it", tok, w.Model)))
			}
		}
	}
	vllm := w.Engine != schema.EngineSGLang
	if skip <= len(w.Serve.ExtraArgs) {
		check("serve.extra_args", w.Serve.ExtraArgs[skip:], vllm)
	}
	if w.SGLang != nil {
		check("sglang.extra_args", w.SGLang.ExtraArgs, false)
	}
	if d := w.Disagg; d != nil {
		check("disagg.prefill.serve.extra_args", d.Prefill.Serve.ExtraArgs, true)
		check("disagg.decode.serve.extra_args", d.Decode.Serve.ExtraArgs, true)
		check("disagg.router.extra_args", d.Router.ExtraArgs, false)
	}
	for i, c := range w.CustomSteps {
		check(fmt.Sprintf("custom_steps[%d].command", i), c.Command, false)
	}
	return out
}
