// Package ingest is wlc's side of the perf and eval dashboards: the row
// shapes of schema/ingest.cue, a compact description of them that the
// job's own ingest tool (backends/runner/ingest.py, which has no CUE)
// checks rows against, validation of rows with CUE itself, and sending
// rows (`wlc ingest`).
package ingest

import (
	"encoding/json"
	"fmt"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"

	"github.com/wlcdev/wlc/schema"
)

// The row definitions of schema/ingest.cue.
const (
	PerfRow        = "#PerfRow"
	EvalResultsRow = "#EvalResultsRow"
	EvalSamplesRow = "#EvalSamplesRow"
)

// Rows are the definitions a job sends, in the order Shapes lists them.
var Rows = []string{PerfRow, EvalResultsRow, EvalSamplesRow}

// Spec describes one value: its kind and the constraints on it. It is the
// compact form of a CUE definition that ingest.py checks (see its check
// function for the meaning of each field).
type Spec struct {
	Kind     string          `json:"kind,omitempty"` // string, int, number, bool, struct, list
	Required bool            `json:"required,omitempty"`
	Enum     []any           `json:"enum,omitempty"`
	Not      []any           `json:"not,omitempty"`
	Regex    string          `json:"regex,omitempty"`
	Min      *float64        `json:"min,omitempty"`
	XMin     *float64        `json:"xmin,omitempty"`
	Max      *float64        `json:"max,omitempty"`
	XMax     *float64        `json:"xmax,omitempty"`
	Fields   map[string]Spec `json:"fields,omitempty"`
	Patterns []Pattern       `json:"patterns,omitempty"`
	Open     bool            `json:"open,omitempty"`
	Elem     *Spec           `json:"elem,omitempty"`
	MinItems int             `json:"min_items,omitempty"`
}

// Pattern is a field pattern: every field whose name matches Regex.
type Pattern struct {
	Regex string `json:"regex"`
	Value Spec   `json:"value"`
}

var compiled struct {
	once   sync.Once
	defs   map[string]cue.Value
	shapes []byte
	err    error
}

// load compiles the embedded schema once and derives the shapes.
func load() (map[string]cue.Value, []byte, error) {
	c := &compiled
	c.once.Do(func() {
		v, err := compileSchema(cuecontext.New())
		if err != nil {
			c.err = err
			return
		}
		c.defs, c.shapes, c.err = shapesOf(v)
	})
	return c.defs, c.shapes, c.err
}

// shapesOf finds the row definitions in the schema package v and
// describes them.
func shapesOf(v cue.Value) (map[string]cue.Value, []byte, error) {
	defs := map[string]cue.Value{}
	out := map[string]Spec{}
	for _, name := range Rows {
		d := v.LookupPath(cue.ParsePath(name))
		if !d.Exists() {
			return nil, nil, fmt.Errorf("embedded schema: %s is missing", name)
		}
		defs[name] = d
		s, err := describe(d)
		if err != nil {
			return nil, nil, fmt.Errorf("embedded schema: %s: %w", name, err)
		}
		out[name] = s
	}
	shapes, err := json.Marshal(out)
	return defs, shapes, err
}

// Shapes is the compact JSON description of every row definition, keyed
// by definition name: what the job's ingest tool checks rows against.
func Shapes() (string, error) {
	_, s, err := load()
	return string(s), err
}

// ShapesOf is Shapes from the embedded schema package already built (the
// loader's), so an export does not compile the schema a second time.
func ShapesOf(schemaPkg cue.Value) (string, error) {
	_, s, err := shapesOf(schemaPkg)
	return string(s), err
}

// compileSchema builds the embedded schema package (the binary's own, so
// a stale copy in a workloads module cannot change what rows look like).
func compileSchema(ctx *cue.Context) (cue.Value, error) {
	inst, err := schema.Instance()
	if err != nil {
		return cue.Value{}, err
	}
	v := ctx.BuildInstance(inst)
	return v, v.Err()
}

// describe derives the Spec of a CUE value. It understands the vocabulary
// schema/ingest.cue documents and refuses anything else, so a constraint
// the job's check would not enforce cannot be added unnoticed.
func describe(v cue.Value) (Spec, error) {
	var s Spec
	err := addConstraint(v, &s)
	return s, err
}

func addConstraint(v cue.Value, s *Spec) error {
	op, args := v.Expr()
	switch op {
	case cue.SelectorOp:
		// A reference to another definition: use what it evaluates to.
		return addConstraint(v.Eval(), s)
	case cue.AndOp:
		for _, a := range args {
			if err := addConstraint(a, s); err != nil {
				return err
			}
		}
		return nil
	case cue.OrOp:
		for _, a := range args {
			lit, kind, err := literal(a)
			if err != nil {
				return fmt.Errorf("alternatives must be literals: %w", err)
			}
			if err := setKind(s, kind); err != nil {
				return err
			}
			s.Enum = append(s.Enum, lit)
		}
		return nil
	case cue.GreaterThanEqualOp, cue.GreaterThanOp, cue.LessThanEqualOp, cue.LessThanOp:
		var f float64
		if err := args[0].Decode(&f); err != nil {
			return fmt.Errorf("bound %v: %w", args[0], err)
		}
		if s.Kind == "" {
			s.Kind = "number"
		}
		switch op {
		case cue.GreaterThanEqualOp:
			s.Min = &f
		case cue.GreaterThanOp:
			s.XMin = &f
		case cue.LessThanEqualOp:
			s.Max = &f
		default:
			s.XMax = &f
		}
		return nil
	case cue.NotEqualOp:
		lit, _, err := literal(args[0])
		if err != nil {
			return err
		}
		s.Not = append(s.Not, lit)
		return nil
	case cue.RegexMatchOp:
		var re string
		if err := args[0].Decode(&re); err != nil || s.Regex != "" {
			return fmt.Errorf("one literal regexp per value, got %v", args[0])
		}
		s.Regex = re
		return setKind(s, "string")
	case cue.NoOp:
	default:
		return fmt.Errorf("%v: operator %v is not supported by the job's check", v, op)
	}
	if v.IsConcrete() && v.Kind() != cue.StructKind && v.Kind() != cue.ListKind {
		lit, kind, err := literal(v)
		if err != nil {
			return err
		}
		s.Enum = append(s.Enum, lit)
		return setKind(s, kind)
	}
	switch k := v.IncompleteKind(); k {
	case cue.StringKind:
		return setKind(s, "string")
	case cue.IntKind:
		return setKind(s, "int")
	case cue.NumberKind, cue.FloatKind:
		return setKind(s, "number")
	case cue.BoolKind:
		return setKind(s, "bool")
	case cue.StructKind:
		if err := setKind(s, "struct"); err != nil {
			return err
		}
		return describeStruct(v, s)
	case cue.ListKind:
		if err := setKind(s, "list"); err != nil {
			return err
		}
		return describeList(v, s)
	default:
		return fmt.Errorf("%v: kind %v is not supported by the job's check", v, k)
	}
}

// setKind narrows s's kind; int narrows number (int & >=1 is an int).
func setKind(s *Spec, kind string) error {
	switch {
	case s.Kind == "" || s.Kind == kind:
		s.Kind = kind
	case s.Kind == "number" && kind == "int":
		s.Kind = "int"
	case s.Kind == "int" && kind == "number":
	default:
		return fmt.Errorf("a value cannot be both %s and %s", s.Kind, kind)
	}
	return nil
}

func literal(v cue.Value) (any, string, error) {
	switch v.Kind() {
	case cue.StringKind:
		x, err := v.String()
		return x, "string", err
	case cue.BoolKind:
		x, err := v.Bool()
		return x, "bool", err
	case cue.IntKind:
		x, err := v.Int64()
		return x, "int", err
	case cue.FloatKind, cue.NumberKind:
		x, err := v.Float64()
		return x, "number", err
	}
	return nil, "", fmt.Errorf("%v is not a literal string, number or bool", v)
}

func describeStruct(v cue.Value, s *Spec) error {
	s.Open = v.Allows(cue.Str("\x00"))
	it, err := v.Fields(cue.Optional(true), cue.Patterns(true))
	if err != nil {
		return err
	}
	for it.Next() {
		sel := it.Selector()
		sub, err := describe(it.Value())
		if err != nil {
			return fmt.Errorf("%s: %w", sel, err)
		}
		if sel.ConstraintType()&cue.PatternConstraint != 0 {
			var p Spec
			if err := addConstraint(sel.Pattern(), &p); err != nil || p.Kind != "string" || p.Regex == "" || len(p.Enum)+len(p.Not) > 0 {
				return fmt.Errorf("pattern %s: only a =~ regexp label is supported", sel)
			}
			s.Patterns = append(s.Patterns, Pattern{Regex: p.Regex, Value: sub})
			continue
		}
		sub.Required = !it.IsOptional()
		if s.Fields == nil {
			s.Fields = map[string]Spec{}
		}
		s.Fields[sel.Unquoted()] = sub
	}
	return nil
}

func describeList(v cue.Value, s *Spec) error {
	elem := v.LookupPath(cue.MakePath(cue.AnyIndex))
	if !elem.Exists() {
		return fmt.Errorf("%v: only open lists ([...T]) are supported", v)
	}
	e, err := describe(elem)
	if err != nil {
		return fmt.Errorf("list element: %w", err)
	}
	s.Elem = &e
	var n Spec
	if err := addConstraint(v.Len(), &n); err != nil {
		return fmt.Errorf("list length: %w", err)
	}
	if n.Min != nil {
		s.MinItems = int(*n.Min)
	}
	// Leading elements must be the element type: [T, ...T] is "at least
	// one T", anything else the job's check cannot express.
	for i := 0; i < s.MinItems; i++ {
		lead, err := describe(v.LookupPath(cue.MakePath(cue.Index(i))))
		if err != nil {
			return err
		}
		a, _ := json.Marshal(lead)
		b, _ := json.Marshal(e)
		if string(a) != string(b) {
			return fmt.Errorf("list element %d differs from the rest; only [T, ...T] is supported", i)
		}
	}
	return nil
}
