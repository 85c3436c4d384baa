package load

import (
	"reflect"
	"sync"

	"cuelang.org/go/cue"

	"github.com/wlcdev/wlc/internal/check"
	"github.com/wlcdev/wlc/internal/load/cuedecode"
	"github.com/wlcdev/wlc/schema"
)

// serveFields are #Serve's typed fields (the Go mirror's JSON names); any
// other field of a serve block names a further vLLM option.
var serveFields = sync.OnceValue(func() map[string]bool {
	out := map[string]bool{}
	for name := range jsonFields(reflect.TypeOf(schema.Serve{})) {
		out[name] = true
	}
	return out
})

// engineOptions renders the vLLM options a workload writes as fields of
// serve (enable_chunked_prefill: true) into Serve.Options through
// check.RenderOptions, which checks each against the flag catalog of the
// image the workload runs. It runs before anything renders the server's
// argv (the flag rules then see only options that passed), and also on a
// workload that failed validation (decoded false: w holds the fields that
// decoded alone), so a misspelled field is reported there too.
func (l *loader) engineOptions(wv cue.Value, base string, w *Workload, decoded bool) {
	if l.opts.VLLMFlags == nil || w.Engine == schema.EngineSGLang {
		return
	}
	if !decoded {
		image, _ := wv.LookupPath(pathOf("image")).String()
		w = &Workload{Workload: schema.Workload{Name: w.Name, Profile: w.Profile, Image: image, Serve: w.Serve}}
	}
	cat := check.Catalog(&check.Workload{Workload: w.Workload}, l.env())
	render := func(at string, s *schema.Serve) {
		opts, ok := serveOptions(wv.LookupPath(pathOf(at)), decoded)
		if !ok {
			return
		}
		var ds []check.Diagnostic
		s.Options, ds = check.RenderOptions(cat, at, opts, s.ExtraArgs)
		l.place(base, wv, ds)
	}
	render("serve", &w.Serve)
	if d := w.Disagg; d != nil {
		render("disagg.prefill.serve", &d.Prefill.Serve)
		render("disagg.decode.serve", &d.Decode.Serve)
	}
}

// serveOptions are the fields of the serve block sv that name further
// options, in CUE's order (the order written), each decoded; ok is false
// when sv is no struct. Of a workload that failed validation (valid
// false), a field with an error of its own (a name the schema does not
// allow, "max-model-len") is left out: CUE's error is its finding.
func serveOptions(sv cue.Value, valid bool) (opts []check.Option, ok bool) {
	it, err := sv.Fields()
	if err != nil {
		return nil, false
	}
	for it.Next() {
		name := it.Selector().Unquoted()
		if serveFields()[name] || !valid && it.Value().Validate() != nil {
			continue
		}
		o := check.Option{Name: name}
		o.Err = cuedecode.Decode(it.Value(), &o.Value)
		opts = append(opts, o)
	}
	return opts, true
}
