package check

import (
	"strconv"

	"github.com/wlcdev/wlc/internal/engine/cmdline"
	"github.com/wlcdev/wlc/internal/engine/vllmflags"
	"github.com/wlcdev/wlc/internal/plan"
)

// Option is a field of a serve block beyond #Serve's typed ones: it names
// a further `vllm serve` option (enable_chunked_prefill: true is
// --enable-chunked-prefill). Err is why its value did not decode.
type Option struct {
	Name  string
	Value any
	Err   error
}

// Catalog is the vLLM flag catalog of the image w runs (nil when env
// holds none): the export-time overrides and the profile decide the
// image.
func Catalog(w *Workload, env *Env) *vllmflags.Catalog {
	if env.VLLMFlags == nil {
		return nil
	}
	image := w.Image
	if prof, ok := env.Profiles[w.Profile]; ok {
		if hw, ok := env.Hardware[prof.Hardware]; ok {
			image = plan.ResolveImage(w.Workload, prof, plan.PlatformOf(hw.Vendor), env.Overrides).Ref
		}
	}
	return env.VLLMFlags.For(image)
}

// RenderOptions renders the option fields of the serve block at (serve,
// disagg.prefill.serve, …), in the order written, into the argv the
// server gets, each checked against cat: the option exists in that
// release under that exact name and the value is of its kind, type and
// choices. An option wlc's runner sets, and an extra_args token that
// repeats a rendered option, are errors too. Findings name the field
// (at.name, at.extra_args[i]).
func RenderOptions(cat *vllmflags.Catalog, at string, opts []Option, extraArgs []string) ([]string, []Diagnostic) {
	var fs findings
	standIn := ""
	if cat.StandIn != "" {
		standIn = " [" + cat.StandIn + "]"
	}
	var argv []string
	rendered := map[string]string{} // option → its field
	for _, o := range opts {
		field := at + "." + Label(o.Name)
		if owner := owned(o.Name); owner != "" {
			fs.errorf(field, "%s is set by %s; remove %s", vllmflags.OptionOf(o.Name), owner, field)
			continue
		}
		if o.Err != nil {
			fs.errorf(field, "%v", o.Err)
			continue
		}
		args, err := cat.RenderField(o.Name, o.Value)
		if err != nil {
			fs.errorf(field, "%v%s", err, standIn)
			continue
		}
		rendered[vllmflags.OptionOf(o.Name)] = field
		argv = append(argv, args...)
	}
	for i, tok := range extraArgs {
		if opt, ok := cat.ServeOption(tok); ok && rendered[opt] != "" {
			fs.errorf(at+".extra_args["+strconv.Itoa(i)+"]", "%s repeats %s (%s); keep one of them", tok, rendered[opt], opt)
		}
	}
	return argv, fs
}

// owned names who sets option name's flag when wlc or its runner does
// (--port, --host, the multi-node launch options); "" otherwise.
func owned(name string) string {
	if f := cmdline.VLLMServe.Lookup(vllmflags.OptionOf(name)); f != nil && f.Field == "" {
		return f.Owner
	}
	return ""
}
