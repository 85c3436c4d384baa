package ingest

import (
	"fmt"
	"strings"
	"sync"

	"cuelang.org/go/cue"
	cueerrors "cuelang.org/go/cue/errors"
	cuejson "cuelang.org/go/encoding/json"
)

// mu serialises CUE evaluation: values of one context are not safe for
// concurrent use (the test server validates rows from parallel jobs).
var mu sync.Mutex

// Validate checks one JSON row against a definition of schema/ingest.cue
// (PerfRow, EvalResultsRow or EvalSamplesRow). The error is one line.
func Validate(definition string, body []byte) error {
	defs, _, err := load()
	if err != nil {
		return err
	}
	def, ok := defs[definition]
	if !ok {
		return fmt.Errorf("no row definition %s", definition)
	}
	expr, err := cuejson.Extract(definition, body)
	if err != nil {
		return fmt.Errorf("not valid JSON: %v", oneLine(err))
	}
	mu.Lock()
	defer mu.Unlock()
	v := def.Unify(def.Context().BuildExpr(expr))
	if err := v.Validate(cue.Concrete(true)); err != nil {
		return fmt.Errorf("does not match %s: %s", definition, oneLine(err))
	}
	return nil
}

// oneLine joins a CUE error list into one line.
func oneLine(err error) string {
	var msgs []string
	for _, e := range cueerrors.Errors(err) {
		format, args := e.Msg()
		msg := fmt.Sprintf(format, args...)
		if p := strings.Join(e.Path(), "."); p != "" {
			msg = p + ": " + msg
		}
		msgs = append(msgs, msg)
	}
	if len(msgs) == 0 {
		return strings.ReplaceAll(err.Error(), "\n", "; ")
	}
	return strings.Join(msgs, "; ")
}
