package check

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/wlcdev/wlc/internal/diag/suggest"
	"github.com/wlcdev/wlc/internal/engine/cmdline"
	"github.com/wlcdev/wlc/internal/engine/vllmrouter"
)

// routerArgs checks a PD router's extra_args the way vllm-router's parser
// reads them (cmdline.VLLMRouter, vllmrouter's model of its clap parser):
// an option wlc sets (--port, --policy, the worker URLs...) is refused at
// its entry, naming the typed field to set instead; an option the router
// does not have, a value it refuses or a single-value option given twice
// would make the router exit at start, after every instance has loaded
// its weights, so each is an error too.
func (fs *findings) routerArgs(w *Workload) {
	if w.Disagg == nil {
		return
	}
	// The command's own arguments are a route too.
	if cmd := w.Disagg.Router.Command; len(cmd) > 1 {
		for _, o := range cmdline.VLLMRouter.Owned(cmd[1:], nil) {
			fs.errorf(fmt.Sprintf("disagg.router.command[%d]", o.Start+1), "%s is set by %s; %s", cmd[o.Start+1], o.SetBy, o.Fix("disagg.router.command"))
		}
	}
	args := w.Disagg.Router.ExtraArgs
	at := func(i int) string { return fmt.Sprintf("disagg.router.extra_args[%d]", i) }
	bad := map[int]bool{} // tokens reported, and the values they take
	for _, o := range cmdline.VLLMRouter.Owned(args, nil) {
		fs.errorf(at(o.Start), "%s is set by %s; %s", args[o.Start], o.SetBy, o.Fix("disagg.router.extra_args"))
		for i := o.Start; i < o.End; i++ {
			bad[i] = true
		}
	}
	for i, tok := range args {
		if bad[i] || !strings.HasPrefix(tok, "-") || isNumber(tok) || tok == "-" {
			continue
		}
		opt, _, _ := strings.Cut(tok, "=")
		switch {
		case slices.Contains(vllmrouter.Informational, opt):
			fs.errorf(at(i), "%s makes vllm-router print and exit, so the router never serves; remove it", tok)
		case !cmdline.VLLMRouter.Knows(opt):
			fs.errorf(at(i), "vllm-router has no option %s%s", opt, routerSuggestion(opt))
		default:
			continue
		}
		bad[i] = true
	}
	// The rest through the router's parser, one run per stretch between
	// reported tokens, so every refusal is reported.
	for start := 0; start < len(args); {
		if bad[start] {
			// A reported token, and the values it would take.
			for start++; start < len(args) && !bad[start] && !strings.HasPrefix(args[start], "-"); start++ {
			}
			continue
		}
		end := start
		for end < len(args) && !bad[end] {
			end++
		}
		_, rest, idx, perr := vllmrouter.SplitPrefill(args[start:end])
		if perr == nil {
			_, e := vllmrouter.Parse(rest)
			if e == nil {
				start = end
				continue
			}
			perr = &vllmrouter.Error{Index: idx[e.Index], Msg: e.Msg}
		}
		e := perr.(*vllmrouter.Error)
		fs.errorf(at(start+e.Index), "vllm-router would refuse this: %s", strings.ReplaceAll(e.Msg, "\n ", ""))
		start += e.Index
		bad[start] = true
	}
}

// routerSuggestion names the router option opt was likely meant to be
// (clap takes no abbreviations and no _ for -), and where wlc sets it.
func routerSuggestion(opt string) string {
	s := ""
	if alt := strings.ReplaceAll(opt, "_", "-"); cmdline.VLLMRouter.Knows(alt) {
		s = alt
	} else {
		var cands []string
		for _, n := range vllmrouter.Names() {
			if strings.HasPrefix(n, opt) && strings.HasPrefix(opt, "--") && len(opt) > 2 {
				cands = append(cands, n)
			}
		}
		if len(cands) == 1 {
			s = cands[0]
		} else {
			s = suggest.Closest(vllmrouter.Names(), opt)
		}
	}
	if s == "" {
		return "; see `vllm-router --help`"
	}
	msg := "; did you mean " + s + "?"
	if f := cmdline.VLLMRouter.Lookup(s); f != nil {
		if f.Field != "" {
			msg += " (wlc sets it from " + f.Field + ": set that instead)"
		} else {
			msg += " (set by " + f.Owner + ")"
		}
	}
	return msg
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}
