package load

import (
	"reflect"
	"strconv"
	"sync"

	"cuelang.org/go/cue"

	"github.com/wlcdev/wlc/internal/diag"
	"github.com/wlcdev/wlc/internal/engine/cmdline"
	"github.com/wlcdev/wlc/internal/engine/vllmflags"
	"github.com/wlcdev/wlc/internal/load/cuedecode"
	"github.com/wlcdev/wlc/internal/plan"
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
// serve (enable_chunked_prefill: true) into Serve.Options, each checked
// against the flag catalog of the image the workload runs: the option
// exists in that release under that exact name, and the value is of its
// kind, type and choices. An option wlc's runner sets, or one extra_args
// repeats, is an error too. It runs before anything renders the server's
// argv (checkFlags then sees only options that passed), and also on a
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
	cat := l.catalogFor(w)
	l.serveOptions(wv, base, "serve", cat, &w.Serve)
	if d := w.Disagg; d != nil {
		l.serveOptions(wv, base, "disagg.prefill.serve", cat, &d.Prefill.Serve)
		l.serveOptions(wv, base, "disagg.decode.serve", cat, &d.Decode.Serve)
	}
}

// catalogFor is the flag catalog of the image w runs.
func (l *loader) catalogFor(w *Workload) *vllmflags.Catalog {
	image := w.Image
	if prof, ok := l.res.Profiles[w.Profile]; ok {
		if hw, ok := l.res.Hardware[prof.Hardware]; ok {
			image = plan.ResolveImage(w.Workload, prof, plan.PlatformOf(hw.Vendor), l.opts.Overrides).Ref
		}
	}
	return l.opts.VLLMFlags.For(image)
}

func (l *loader) serveOptions(wv cue.Value, base, at string, cat *vllmflags.Catalog, s *schema.Serve) {
	sv := wv.LookupPath(pathOf(at))
	it, err := sv.Fields()
	if err != nil {
		return
	}
	standIn := ""
	if cat.StandIn != "" {
		standIn = " [" + cat.StandIn + "]"
	}
	s.Options = nil
	rendered := map[string]string{} // option → its field
	for it.Next() {
		name := it.Selector().Unquoted()
		if serveFields()[name] {
			continue
		}
		field := at + "." + name
		if f := lookupOwned(name); f != "" {
			l.report(diag.Error, base, wv, field, "%s is set by %s; remove %s", vllmflags.OptionOf(name), f, field)
			continue
		}
		var v any
		if err := cuedecode.Decode(it.Value(), &v); err != nil {
			l.report(diag.Error, base, wv, field, "%v", err)
			continue
		}
		args, err := cat.RenderField(name, v)
		if err != nil {
			l.report(diag.Error, base, wv, field, "%v%s", err, standIn)
			continue
		}
		rendered[vllmflags.OptionOf(name)] = field
		s.Options = append(s.Options, args...)
	}
	for i, tok := range s.ExtraArgs {
		if opt, ok := cat.ServeOption(tok); ok && rendered[opt] != "" {
			l.report(diag.Error, base, wv, at+".extra_args["+strconv.Itoa(i)+"]", "%s repeats %s (%s); keep one of them", tok, rendered[opt], opt)
		}
	}
}

// lookupOwned names who sets option name's flag when wlc or its runner
// does (--port, --host, the multi-node launch options); "" otherwise.
func lookupOwned(name string) string {
	if f := cmdline.VLLMServe.Lookup(vllmflags.OptionOf(name)); f != nil && f.Field == "" {
		return f.Owner
	}
	return ""
}
