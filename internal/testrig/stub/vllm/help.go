package main

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/wlcdev/wlc/internal/engine/vllmcatalog"
)

// The image this stub stands for: WLC_STUB_VLLM_VERSION (default 0.13.0)
// is what `vllm --version` prints. When it is set to a release a built-in
// catalog has, `vllm serve --help=all` lists exactly that catalog's
// options; otherwise (unset: the default) every option of every built-in
// catalog, an image that knows whatever wlc knows. WLC_STUB_VLLM_LACKS=--a,--b takes options
// away: help does not list them and `vllm serve` refuses them as vLLM's
// argparse does, at once, with status 2.

func version() string {
	if v := os.Getenv("WLC_STUB_VLLM_VERSION"); v != "" {
		return v
	}
	return "0.13.0"
}

func lacks(opt string) bool {
	for _, l := range strings.Split(os.Getenv("WLC_STUB_VLLM_LACKS"), ",") {
		if l != "" && l == opt {
			return true
		}
	}
	return false
}

// serveFlags are the image's `vllm serve` options, sorted by name.
func serveFlags() []*vllmcatalog.Flag {
	var out []*vllmcatalog.Flag
	seen := map[string]bool{}
	add := func(fs []*vllmcatalog.Flag) {
		for _, f := range fs {
			if !seen[f.Name()] && !lacks(f.Name()) {
				seen[f.Name()] = true
				out = append(out, f)
			}
		}
	}
	label := "v" + strings.TrimPrefix(os.Getenv("WLC_STUB_VLLM_VERSION"), "v")
	exact := false
	for _, c := range vllmcatalog.Builtin() {
		if c.Label == label {
			add(c.Serve)
			exact = true
		}
	}
	if !exact {
		for _, c := range vllmcatalog.Builtin() {
			add(c.Serve)
		}
	}
	for _, f := range []string{"--host", "--port", "--headless"} {
		if !seen[f] && !lacks(f) {
			seen[f] = true
			kind := vllmcatalog.Value
			if f == "--headless" {
				kind = vllmcatalog.Switch
			}
			out = append(out, &vllmcatalog.Flag{Options: []string{f}, Kind: kind})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

// serveHelp prints `vllm serve --help=all` the way argparse formats it.
func serveHelp() {
	var b strings.Builder
	b.WriteString("usage: vllm serve [model_tag] [options]\n\nStart the vLLM OpenAI Compatible API server.\n\n")
	b.WriteString("positional arguments:\n  model_tag             The model tag to serve (optional if specified in config)\n\noptions:\n  -h, --help            show this help message and exit\n")
	for _, f := range serveFlags() {
		mv := strings.ToUpper(strings.ReplaceAll(strings.TrimPrefix(f.Name(), "--"), "-", "_"))
		if len(f.Choices) > 0 {
			mv = "{" + strings.Join(f.Choices, ",") + "}"
		}
		var parts []string
		for _, o := range f.Options {
			switch {
			case f.Kind == vllmcatalog.Switch || f.Kind == vllmcatalog.Bool:
				parts = append(parts, o)
			case f.Nargs == "+":
				parts = append(parts, o+" "+mv+" ["+mv+" ...]")
			case f.Nargs == "*":
				parts = append(parts, o+" ["+mv+" ...]")
			case f.Nargs == "?":
				parts = append(parts, o+" ["+mv+"]")
			default:
				parts = append(parts, o+" "+mv)
			}
		}
		fmt.Fprintf(&b, "  %s\n                        (default: None)\n", strings.Join(parts, ", "))
	}
	os.Stdout.WriteString(b.String())
}

// unknownOption is the first option of args the image lacks (as argparse
// reads them: --a_b is --a-b, --a.b=v a key of --a), or "".
func unknownOption(args []string) string {
	for _, a := range args {
		if !strings.HasPrefix(a, "--") {
			continue
		}
		name, _, _ := strings.Cut(a, "=")
		name, _, _ = strings.Cut(name, ".")
		if lacks(strings.ReplaceAll(name, "_", "-")) {
			return a
		}
	}
	return ""
}
