// Package vllmrouter models vllm-router's command line (vllm-project/router,
// clap's parser in src/main.rs): its long options, how each reads values,
// their choices and number types, and the --prefill URL [PORT|none] pairs
// the router splits off before clap. vet checks a PD router's extra_args
// with it, and the test double (internal/testrig/stub/vllm-router) parses
// its argv with it, so both accept exactly what the real router accepts.
//
// clap reads option strings exactly: no abbreviations (infer_long_args is
// off), no _ for -, and a single-value option given twice is an error.
package vllmrouter

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Kind is how clap reads an option's values.
type Kind int

const (
	Switch Kind = iota // ArgAction::SetTrue: no value
	Single             // one value, at most once
	Append             // ArgAction::Append: one value per occurrence
	Many               // num_args = 0..: values up to the next option
)

// Option is one of the router's long options.
type Option struct {
	Kind    Kind
	Choices []string // value_parser / ValueEnum
	Num     string   // "u16", "u32", "u64", "usize", "f32", "f64"
}

// Policies are --policy's (and the per-role policies') choices.
var Policies = []string{"random", "round_robin", "cache_aware", "power_of_two", "consistent_hash", "sticky_least_loaded", "rendezvous_hash"}

// Options are vllm-router's CliArgs, by long name without "--";
// --prefill is split off before clap (SplitPrefill).
var Options = map[string]Option{
	"host":                          {Kind: Single},
	"port":                          {Kind: Single, Num: "u16"},
	"worker-urls":                   {Kind: Many},
	"policy":                        {Kind: Single, Choices: Policies},
	"vllm-pd-disaggregation":        {Kind: Switch},
	"vllm-discovery-address":        {Kind: Single},
	"decode":                        {Kind: Append},
	"prefill-policy":                {Kind: Single, Choices: Policies},
	"decode-policy":                 {Kind: Single, Choices: Policies},
	"worker-startup-timeout-secs":   {Kind: Single, Num: "u64"},
	"worker-startup-check-interval": {Kind: Single, Num: "u64"},
	"cache-threshold":               {Kind: Single, Num: "f32"},
	"balance-abs-threshold":         {Kind: Single, Num: "usize"},
	"balance-rel-threshold":         {Kind: Single, Num: "f32"},
	"eviction-interval":             {Kind: Single, Num: "u64"},
	"max-tree-size":                 {Kind: Single, Num: "usize"},
	"max-payload-size":              {Kind: Single, Num: "usize"},
	"intra-node-data-parallel-size": {Kind: Single, Num: "usize"},
	"api-key":                       {Kind: Single},
	"api-key-validation-urls":       {Kind: Many},
	"backend":                       {Kind: Single, Choices: []string{"vllm", "trtllm", "openai", "anthropic"}},
	"runtime":                       {Kind: Single, Choices: []string{"vllm", "trtllm", "openai", "anthropic"}},
	"log-dir":                       {Kind: Single},
	"log-level":                     {Kind: Single, Choices: []string{"debug", "info", "warn", "error"}},
	"enable-trace":                  {Kind: Switch},
	"otlp-traces-endpoint":          {Kind: Single},
	"otel-sampling-ratio":           {Kind: Single, Num: "f64"},
	"otel-excluded-paths":           {Kind: Many},
	"service-discovery":             {Kind: Switch},
	"selector":                      {Kind: Many},
	"service-discovery-port":        {Kind: Single, Num: "u16"},
	"service-discovery-namespace":   {Kind: Single},
	"prefill-selector":              {Kind: Many},
	"decode-selector":               {Kind: Many},
	"prometheus-port":               {Kind: Single, Num: "u16"},
	"prometheus-host":               {Kind: Single},
	"request-id-headers":            {Kind: Many},
	"request-timeout-secs":          {Kind: Single, Num: "u64"},
	"max-concurrent-requests":       {Kind: Single, Num: "usize"},
	"cors-allowed-origins":          {Kind: Many},
	"retry-max-retries":             {Kind: Single, Num: "u32"},
	"retry-initial-backoff-ms":      {Kind: Single, Num: "u64"},
	"retry-max-backoff-ms":          {Kind: Single, Num: "u64"},
	"retry-backoff-multiplier":      {Kind: Single, Num: "f32"},
	"retry-jitter-factor":           {Kind: Single, Num: "f32"},
	"disable-retries":               {Kind: Switch},
	"cb-failure-threshold":          {Kind: Single, Num: "u32"},
	"cb-success-threshold":          {Kind: Single, Num: "u32"},
	"cb-timeout-duration-secs":      {Kind: Single, Num: "u64"},
	"cb-window-duration-secs":       {Kind: Single, Num: "u64"},
	"disable-circuit-breaker":       {Kind: Switch},
	"health-failure-threshold":      {Kind: Single, Num: "u32"},
	"health-success-threshold":      {Kind: Single, Num: "u32"},
	"health-check-timeout-secs":     {Kind: Single, Num: "u64"},
	"health-check-interval-secs":    {Kind: Single, Num: "u64"},
	"health-check-endpoint":         {Kind: Single},
	"enable-igw":                    {Kind: Switch},
	"history-backend":               {Kind: Single, Choices: []string{"memory", "none"}},
	"profile":                       {Kind: Switch},
	"kv-connector":                  {Kind: Single, Choices: []string{"nixl", "mooncake"}},
}

// Prefill is the option the router splits off before clap.
const Prefill = "--prefill"

// Informational are the options that make clap print and exit 0 (the
// router never serves).
var Informational = []string{"-h", "--help", "-V", "--version"}

// Names are every option string the router accepts, sorted ("--prefill"
// and the informational ones included).
func Names() []string {
	out := []string{Prefill}
	out = append(out, Informational...)
	for n := range Options {
		out = append(out, "--"+n)
	}
	sort.Strings(out)
	return out
}

// PrefillURL is one --prefill URL with its bootstrap port ("" for none).
type PrefillURL struct {
	URL, Port string
}

// Error is a token the router refuses; Index is its position in the argv
// given to SplitPrefill or Parse.
type Error struct {
	Index int
	Msg   string
}

func (e *Error) Error() string { return e.Msg }

// SplitPrefill takes every --prefill URL [PORT|none] out of args before
// option parsing, as the real router does; rest keeps each remaining
// token's index in args.
func SplitPrefill(args []string) (pre []PrefillURL, rest []string, at []int, err error) {
	for i := 0; i < len(args); i++ {
		if args[i] != Prefill {
			rest, at = append(rest, args[i]), append(at, i)
			continue
		}
		if i+1 >= len(args) {
			return nil, nil, nil, &Error{i, "--prefill requires a URL immediately after"}
		}
		u := args[i+1]
		i++
		if strings.HasPrefix(u, "-") {
			return nil, nil, nil, &Error{i, "Invalid url " + u}
		}
		p := PrefillURL{URL: u}
		if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			next := args[i+1]
			if strings.EqualFold(next, "none") {
				i++
			} else if _, err := strconv.ParseUint(next, 10, 16); err == nil {
				p.Port = next
				i++
			}
		}
		pre = append(pre, p)
	}
	return pre, rest, at, nil
}

// Parse is clap's view of the arguments left after SplitPrefill: every
// value by long option name (a switch as "true"; "help" for the
// informational options). The error's Index is the token's in args.
func Parse(args []string) (map[string][]string, *Error) {
	vals := map[string][]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if isInformational(a) {
			vals["help"] = []string{a}
			continue
		}
		if !strings.HasPrefix(a, "--") {
			return nil, &Error{i, fmt.Sprintf("unexpected argument '%s' found", a)}
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		opt, ok := Options[name]
		if !ok {
			return nil, &Error{i, fmt.Sprintf("unexpected argument '--%s' found", name)}
		}
		switch opt.Kind {
		case Switch:
			if hasValue {
				return nil, &Error{i, fmt.Sprintf("unexpected value '%s' for '--%s' found; no more were expected", value, name)}
			}
			vals[name] = []string{"true"}
			continue
		case Many:
			var vs []string
			if hasValue {
				vs = append(vs, value)
			}
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				vs = append(vs, args[i+1])
				i++
			}
			vals[name] = append(vals[name], vs...)
			continue
		}
		at := i
		if !hasValue {
			if i+1 >= len(args) || (strings.HasPrefix(args[i+1], "-") && !isNumber(args[i+1])) {
				return nil, &Error{i, fmt.Sprintf("a value is required for '--%s <%s>' but none was supplied", name, metavar(name))}
			}
			value = args[i+1]
			i++
		}
		if err := check(name, opt, value); err != nil {
			return nil, &Error{at, err.Error()}
		}
		if opt.Kind == Single {
			if _, dup := vals[name]; dup {
				return nil, &Error{at, fmt.Sprintf("the argument '--%s <%s>' cannot be used multiple times", name, metavar(name))}
			}
		}
		vals[name] = append(vals[name], value)
	}
	return vals, nil
}

func isInformational(a string) bool {
	for _, s := range Informational {
		if a == s {
			return true
		}
	}
	return false
}

func metavar(name string) string { return strings.ToUpper(strings.ReplaceAll(name, "-", "_")) }

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

func check(name string, opt Option, v string) error {
	if len(opt.Choices) > 0 {
		for _, c := range opt.Choices {
			if v == c {
				return nil
			}
		}
		return fmt.Errorf("invalid value '%s' for '--%s <%s>'\n  [possible values: %s]", v, name, metavar(name), strings.Join(opt.Choices, ", "))
	}
	var err error
	switch opt.Num {
	case "u16":
		_, err = strconv.ParseUint(v, 10, 16)
	case "u32":
		_, err = strconv.ParseUint(v, 10, 32)
	case "u64", "usize":
		_, err = strconv.ParseUint(v, 10, 64)
	case "f32", "f64":
		_, err = strconv.ParseFloat(v, 64)
	}
	if err != nil {
		return fmt.Errorf("invalid value '%s' for '--%s <%s>': %v", v, name, metavar(name), err)
	}
	return nil
}
