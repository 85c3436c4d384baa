package cmdline

import (
	"fmt"
	"strings"
)

// The one reading of a route's free-form options (serve extra_args, a
// bench config's or sweep's args, the PD router's extra_args): every route
// reads its tokens with its command's parser (Resolve: the --x=v form,
// aliases, unambiguous prefixes, _ for - where the parser does that) and
// asks which of the options it reaches wlc sets itself on that route.

// Owned is a unit of an argv that sets an option wlc sets on its route.
type Owned struct {
	Unit
	// SetBy is the typed field that sets the option (Field true), or who
	// sets it.
	SetBy string
	Field bool
}

// Owned reads argv as the command's parser does and returns the units
// that set an option wlc sets on this route: a declared flag, or an
// option of also (canonical name → who sets it on this route, for the
// options a route adds: the sweep's --num-warmups, a disaggregated
// instance's data-parallel addresses).
func (s *Spec) Owned(argv []string, also map[string]string) []Owned {
	var out []Owned
	for _, u := range s.Parse(argv).Units {
		if !u.IsOption {
			continue
		}
		if by, ok := also[u.Option]; ok {
			out = append(out, Owned{Unit: u, SetBy: by})
			continue
		}
		if f := u.Flag; f != nil {
			out = append(out, Owned{Unit: u, SetBy: f.SetBy(), Field: f.Field != ""})
		}
	}
	return out
}

// Spelled says what the unit's option token is to the parser when the
// user spelled it otherwise: "-tp (--tensor-parallel-size to vLLM)"; the
// token alone when it is the option's own name.
func (o Owned) Spelled(tok, parser string) string {
	if o.Written == o.Option || o.Written == "--no-"+strings.TrimPrefix(o.Option, "--") {
		return tok
	}
	return fmt.Sprintf("%s (%s to %s)", tok, o.Canonical(), parser)
}

// Fix says what to do instead: set the typed field, or remove the token
// from where (a field path such as "extra_args").
func (o Owned) Fix(where string) string {
	if o.Field {
		return fmt.Sprintf("set %s instead and remove it from %s", o.SetBy, where)
	}
	return "remove it from " + where
}
