package bktest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/wlcdev/wlc/internal/testenv"
)

// SchemaFile is the Buildkite pipeline JSON schema inside ../shared. It is
// read from there rather than vendored (see ../shared/buildkite/SOURCE.md).
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

// violations reduces the error tree to its leaves at the deepest instance
// locations. Each step is checked against an anyOf of every step type, so the
// raw tree holds one failed branch per step type; the branch that got furthest
// into the value (e.g. /steps/0/timeout_in_minutes rather than /steps/0) is
// the one describing the mistake.
func violations(doc any, root *jsonschema.ValidationError) []Violation {
	var leaves []*jsonschema.ValidationError
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, e)
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(root)

	// Deepest per top-level subtree, so two independent mistakes in two steps
	// are both reported.
	deepest := map[string]int{}
	subtree := func(loc []string) string {
		if len(loc) >= 2 && loc[0] == "steps" {
			return loc[0] + "/" + loc[1]
		}
		if len(loc) >= 1 {
			return loc[0]
		}
		return ""
	}
	for _, l := range leaves {
		k := subtree(l.InstanceLocation)
		deepest[k] = max(deepest[k], len(l.InstanceLocation))
	}
	seen := map[string]bool{}
	var out []Violation
	for _, l := range leaves {
		if len(l.InstanceLocation) != deepest[subtree(l.InstanceLocation)] {
			continue
		}
		ptr := "/" + strings.Join(l.InstanceLocation, "/")
		if len(l.InstanceLocation) == 0 {
			ptr = ""
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
