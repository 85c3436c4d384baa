package check

import (
	"fmt"
	"strings"

	"github.com/wlcdev/wlc/internal/engine/cmdline"
	"github.com/wlcdev/wlc/internal/engine/sglang"
	"github.com/wlcdev/wlc/internal/plan"
	"github.com/wlcdev/wlc/schema"
)

// The rules about which engine an option belongs to, and SGLang's argv
// rules. The schema refuses a whole block given to the wrong engine
// (sglang: on a vLLM server, vllm_bench on SGLang); these need Go because
// they read argv tokens through the engines' declarations
// (cmdline.SGLangServe, cmdline.VLLMServe) and SGLang's parser model
// (internal/engine/sglang), or ask which serve fields the user wrote (serve always
// exists, with vLLM's defaults).

// engine reports options meant for the other engine and SGLang argv its
// parser would refuse.
func (fs *findings) engine(w *Workload) {
	errf := fs.errorf
	if w.Engine != schema.EngineSGLang {
		for i, tok := range w.Serve.ExtraArgs {
			if i < w.Own {
				continue
			}
			if f := sglangOnly(tok); f != nil {
				fix := "set engine: \"sglang\" to serve with SGLang"
				if f.Equivalent != "" {
					fix = "vLLM's option is " + f.Equivalent + " (or set engine: \"sglang\" to serve with SGLang)"
				}
				errf(fmt.Sprintf("serve.extra_args[%d]", i-w.Own), "%s is an SGLang option (%s), not a `vllm serve` one; %s", tok, f.Field, fix)
			}
		}
		return
	}

	// serve holds vLLM's options: any field the user wrote is for the
	// other engine.
	for _, name := range w.ServeWritten {
		field := "serve." + name
		if name == "extra_args" {
			errf(field, "serve.extra_args are `vllm serve` arguments, but engine is \"sglang\"; put SGLang's options in sglang.extra_args")
			continue
		}
		if alts := sglangFor(field); len(alts) > 0 {
			errf(field, "%s is a `vllm serve` option, but engine is \"sglang\"; set %s instead", field, strings.Join(alts, " / "))
		} else {
			errf(field, "%s is a `vllm serve` option, but engine is \"sglang\", which has no typed equivalent; remove it or pass SGLang's own option in sglang.extra_args", field)
		}
	}
	if w.SGLang == nil {
		return
	}
	fs.sglangTyped(w.SGLang)

	args, errs := sglang.LaunchServer.Parse(w.SGLang.ExtraArgs)
	for _, e := range errs {
		field := fmt.Sprintf("sglang.extra_args[%d]", e.Index)
		tok := w.SGLang.ExtraArgs[e.Index]
		if strings.HasPrefix(e.Msg, "unrecognized arguments: -") {
			if m, ok := cmdline.VLLMServe.Resolve(tok); ok && m.Flag != nil && m.Flag.Field != "" {
				fix := "SGLang has no typed equivalent; remove it"
				if alts := sglangFor(m.Flag.Field); len(alts) > 0 {
					fix = "SGLang's option is " + strings.Join(alts, " / ")
				}
				errf(field, "%s is a `vllm serve` option (%s), not one of %s; %s", tok, m.Flag.Field, sglang.LaunchServer.Prog, fix)
			} else {
				fs.warnf(field, "%s has no option %s among the ones wlc knows; check the image's `python3 -m sglang.launch_server --help`", sglang.LaunchServer.Prog, tok)
			}
			continue
		}
		errf(field, "%s would refuse this: %s", sglang.LaunchServer.Prog, e.Msg)
	}
	for _, a := range args {
		f := cmdline.SGLangServe.Lookup(a.Option.Name())
		if f == nil {
			continue
		}
		field := fmt.Sprintf("sglang.extra_args[%d]", a.Index)
		if f.Field != "" {
			errf(field, "%s is %s; set that instead and remove it from extra_args (the later flag would silently win)", a.Token, f.Field)
		} else {
			errf(field, "%s is set by %s; remove it from extra_args", a.Token, f.Owner)
		}
	}
}

// sglangTyped runs the typed options through launch_server's parser
// model, so a value it would refuse (a backend name outside its choices)
// is an error at the field.
func (fs *findings) sglangTyped(s *schema.SGLangServe) {
	argv := cmdline.SGLangServe.Render(cmdline.Fields("sglang.", s))
	_, errs := sglang.LaunchServer.Parse(argv)
	for _, e := range errs {
		field := "sglang"
		if f := cmdline.SGLangServe.Lookup(argv[e.Index]); f != nil && f.Field != "" {
			field = f.Field
		}
		fs.errorf(field, "%s would refuse this: %s", sglang.LaunchServer.Prog, e.Msg)
	}
}

// sglangOnly is the typed SGLang option a `vllm serve` argv token spells
// when `vllm serve` has no such option string (--mem-fraction-static,
// --tp-size=8; --tensor-parallel-size is both engines').
func sglangOnly(tok string) *cmdline.Flag {
	if !strings.HasPrefix(tok, "--") {
		return nil
	}
	name, _, _ := strings.Cut(tok, "=")
	name = "--" + strings.ReplaceAll(strings.TrimPrefix(name, "--"), "_", "-")
	if cmdline.VLLMServe.Knows(name) {
		return nil
	}
	o := sglang.LaunchServer.Exact(name)
	if o == nil {
		return nil
	}
	if f := cmdline.SGLangServe.Lookup(o.Name()); f != nil && f.Field != "" {
		return f
	}
	return nil
}

// sglangFor are the sglang fields that mean what the vLLM serve field
// means (speculative_config maps to several).
func sglangFor(vllmField string) []string {
	var out []string
	for _, f := range cmdline.SGLangServe.Flags {
		if f.Equivalent == vllmField && f.Field != "" {
			out = append(out, f.Field)
		}
	}
	return out
}

// sglangBenchArgs checks each config's extra bench_serving args: an
// option wlc sets (or an abbreviation of one), or one bench_serving would
// refuse, is an error at its key.
func (fs *findings) sglangBenchArgs(w *Workload) {
	if w.SGLangBench == nil {
		return
	}
	for ci, c := range w.SGLangBench.Configs {
		for k, v := range c.Args {
			field := fmt.Sprintf("sglang_bench.configs[%d].args.%s", ci, Label(k))
			name := "--" + strings.ReplaceAll(strings.TrimLeft(k, "-"), "_", "-")
			o, cands := sglang.BenchServing.Lookup(name)
			switch {
			case o == nil && len(cands) > 0:
				fs.errorf(field, "%s is ambiguous for %s: it could be %s; spell the option out", k, sglang.BenchServing.Prog, strings.Join(cands, ", "))
				continue
			case o == nil:
				fs.errorf(field, "%s has no option %s; see `%s --help`", sglang.BenchServing.Prog, name, sglang.BenchServing.Prog)
				continue
			}
			if f := cmdline.SGLangBench.Lookup(o.Name()); f != nil {
				fs.errorf(field, "bench arg %s (%s) is set by %s; remove it from args", k, o.Name(), f.SetBy())
				continue
			}
			argv := plan.BenchArgs(map[string]any{k: v})
			args, errs := sglang.BenchServing.Parse(argv)
			if len(errs) > 0 {
				fs.errorf(field, "%s would refuse this: %s", sglang.BenchServing.Prog, errs[0].Msg)
				continue
			}
			// A value bench_serving reads as an option (a list option
			// takes none when the next token is one).
			for _, a := range args {
				if f := cmdline.SGLangBench.Lookup(a.Option.Name()); f != nil && a.Index > 0 {
					fs.errorf(field, "bench arg %s's value %s (%s to %s) is set by %s; remove it from args", k, argv[a.Index], a.Option.Name(), sglang.BenchServing.Prog, map[bool]string{true: "wlc from ", false: ""}[f.Field != ""]+f.SetBy())
					break
				}
			}
		}
	}
}
