package bktest

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/wlcdev/wlc/internal/testrig/testenv"
)

// SchemaFile is the Buildkite pipeline JSON schema inside the reference
// corpus (testenv.SharedDir). It is read from there rather than vendored
// (see buildkite/SOURCE.md beside it).
const SchemaFile = "buildkite/pipeline-schema.json"

// ValidateSchema checks pipelineYAML against Buildkite's pipeline JSON schema
// and fails t with the innermost violations, each naming its step.
func ValidateSchema(t testing.TB, pipelineYAML []byte) {
	t.Helper()
	path := filepath.Join(testenv.SharedDir(t), SchemaFile)
	if err := CheckSchema(path, pipelineYAML); err != nil {
		t.Fatalf("pipeline does not match %s:\n%v", SchemaFile, err)
	}
}

// printer is what jsonschema's own Error() uses; LocalizedString needs one.
var printer = message.NewPrinter(language.English)

var schemas sync.Map // schema path -> *compiledSchema

type compiledSchema struct {
	once sync.Once
	sch  *jsonschema.Schema
	err  error
}

func loadSchema(path string) (*jsonschema.Schema, error) {
	v, _ := schemas.LoadOrStore(path, &compiledSchema{})
	c := v.(*compiledSchema)
	c.once.Do(func() {
		f, err := os.Open(path)
		if err != nil {
			c.err = err
			return
		}
		defer f.Close()
		doc, err := jsonschema.UnmarshalJSON(f)
		if err != nil {
			c.err = fmt.Errorf("%s: %w", path, err)
			return
		}
		comp := jsonschema.NewCompiler()
		// A fixed URL keeps error messages short and stops the compiler
		// from trying to fetch anything.
		const url = "file:///buildkite/pipeline-schema.json"
		if err := comp.AddResource(url, doc); err != nil {
			c.err = fmt.Errorf("%s: %w", path, err)
			return
		}
		c.sch, c.err = comp.Compile(url)
	})
	return c.sch, c.err
}

// CheckSchema is ValidateSchema returning an error: for tests that expect a
// pipeline to be rejected. schemaPath is the JSON schema file.
func CheckSchema(schemaPath string, pipelineYAML []byte) error {
	sch, err := loadSchema(schemaPath)
	if err != nil {
		return fmt.Errorf("loading schema: %w", err)
	}
	doc, err := YAMLToJSON(pipelineYAML)
	if err != nil {
		return err
	}
	err = sch.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	return &SchemaError{Violations: violations(doc, ve)}
}

// SchemaError lists the violations most likely to be the real problem.
type SchemaError struct {
	Violations []Violation
}

// Violation is one schema failure at one place in the pipeline.
type Violation struct {
	Pointer string // JSON pointer, e.g. /steps/0/timeout_in_minutes
	Where   string // Pointer plus the step's key/label
	Message string // e.g. "got string, want integer"
}

func (e *SchemaError) Error() string {
	var b strings.Builder
	for i, v := range e.Violations {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "  at %s: %s", v.Where, v.Message)
	}
	return b.String()
}

// violations reduces the error tree to the leaves of the most plausible
// branches. Each step is checked against an anyOf of every step type (and
// nested forms like `command: {command: ...}`), so the raw tree holds one
// failed branch per type, most of them noise ("got object, want string").
func violations(doc any, root *jsonschema.ValidationError) []Violation {
	seen := map[string]bool{}
	var out []Violation
	for _, l := range bestLeaves(doc, root) {
		ptr := ""
		if len(l.InstanceLocation) > 0 {
			ptr = "/" + strings.Join(l.InstanceLocation, "/")
		}
		msg := l.ErrorKind.LocalizedString(printer)
		if seen[ptr+"\x00"+msg] {
			continue
		}
		seen[ptr+"\x00"+msg] = true
		out = append(out, Violation{Pointer: ptr, Where: describe(doc, l.InstanceLocation), Message: msg})
	}
	slices.SortStableFunc(out, func(a, b Violation) int { return strings.Compare(a.Pointer, b.Pointer) })
	return out
}

// bestLeaves picks, at every anyOf/oneOf, the branch that best explains the
// failure: branches that fail on the value's own type, a required property
// or a const/enum at the anyOf's location are a different kind of thing and
// are dropped; of the rest the one with the fewest errors wins (each
// unexpected property counting as one, so a command step with one stray key
// beats a block step that rejects `command` as well), ties going to
// the deeper error. If every branch is of the wrong kind (an unknown step
// type), all their errors are kept so the reader sees what was expected.
func bestLeaves(doc any, e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	switch k := e.ErrorKind.(type) {
	case *kind.AnyOf, *kind.OneOf:
	case *kind.PropertyNames:
		// The name is validated as a detached instance, so its errors carry
		// an empty location; point them at the offending key instead.
		loc := append(repairLocation(doc, e.InstanceLocation, k.Property), k.Property)
		var out []*jsonschema.ValidationError
		for _, c := range e.Causes {
			for _, l := range bestLeaves(doc, c) {
				moved := *l
				moved.InstanceLocation = loc
				out = append(out, &moved)
			}
		}
		return out
	default:
		var out []*jsonschema.ValidationError
		for _, c := range e.Causes {
			out = append(out, bestLeaves(doc, c)...)
		}
		return out
	}
	var all, best []*jsonschema.ValidationError
	bestDepth, bestScore := -1, 0
	for _, c := range e.Causes {
		leaves := bestLeaves(doc, c)
		all = append(all, leaves...)
		if wrongKind(e.InstanceLocation, leaves) {
			continue
		}
		depth, score := 0, 0
		for _, l := range leaves {
			depth = max(depth, len(l.InstanceLocation))
			score += errorWeight(l)
		}
		if best == nil || score < bestScore || (score == bestScore && depth > bestDepth) {
			best, bestScore, bestDepth = leaves, score, depth
		}
	}
	if best == nil {
		return all
	}
	return best
}

func wrongKind(at []string, leaves []*jsonschema.ValidationError) bool {
	for _, l := range leaves {
		if len(l.InstanceLocation) != len(at) {
			continue
		}
		switch l.ErrorKind.(type) {
		case *kind.Type, *kind.Required, *kind.Const, *kind.Enum:
			return true
		}
	}
	return false
}

func errorWeight(e *jsonschema.ValidationError) int {
	if ap, ok := e.ErrorKind.(*kind.AdditionalProperties); ok && len(ap.Properties) > 0 {
		return len(ap.Properties)
	}
	return 1
}

// repairLocation works around jsonschema v6.0.3 storing a propertyNames
// error's location without copying it (validator.go: `verr.InstanceLocation
// = vd.vloc`), so sibling properties validated later overwrite its elements;
// the length stays right. It returns the path, of that length, to an object
// holding prop that agrees with loc in the most elements.
func repairLocation(doc any, loc []string, prop string) []string {
	var best []string
	bestScore := -1
	var walk func(v any, path []string)
	walk = func(v any, path []string) {
		if len(path) > len(loc) {
			return
		}
		switch v := v.(type) {
		case map[string]any:
			if _, ok := v[prop]; ok && len(path) == len(loc) {
				score := 0
				for i := range path {
					if path[i] == loc[i] {
						score++
					}
				}
				if score > bestScore {
					best, bestScore = slices.Clone(path), score
				}
			}
			for _, k := range slices.Sorted(maps.Keys(v)) {
				walk(v[k], append(path, k))
			}
		case []any:
			for i, x := range v {
				walk(x, append(path, strconv.Itoa(i)))
			}
		}
	}
	walk(doc, nil)
	if best == nil {
		return slices.Clone(loc)
	}
	return best
}
