package main

import (
	"bytes"
	"strings"
	"testing"
)

// Every command-line mistake cobra detects (argument counts, unknown
// commands, unknown flags) reaches the one printer as a usageError: exit 2
// and the --help hint, never a message matched by its text.
func TestUsageErrorsAreTyped(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, `wlc: unknown command "frobnicate" for "wlc"`},
		{[]string{"vett"}, "Did you mean this?\n\tvet\n"},
		{[]string{"vet", "a", "b"}, "accepts at most 1 arg(s), received 2"},
		{[]string{"show"}, "accepts between 1 and 2 arg(s), received 0"},
		{[]string{"version", "extra"}, `unknown command "extra" for "wlc version"`},
		{[]string{"completion", "bash", "extra"}, `unknown command "extra" for "wlc completion bash"`},
		{[]string{"vet", "--bogus"}, "wlc: unknown flag: --bogus"},
	} {
		var stdout, stderr bytes.Buffer
		code := Main(c.args, strings.NewReader(""), &stdout, &stderr)
		if code != exitUsage {
			t.Errorf("wlc %s: exit %d, want %d (stderr %q)", strings.Join(c.args, " "), code, exitUsage, stderr.String())
		}
		if !strings.Contains(stderr.String(), c.want) || !strings.HasSuffix(stderr.String(), "Run 'wlc --help' for usage.\n") {
			t.Errorf("wlc %s: stderr %q, want %q and the --help hint", strings.Join(c.args, " "), stderr.String(), c.want)
		}
	}
}

// A command's own failure is printed once, by Main, as "<cmd>: <why>",
// and exits 1.
func TestCommandErrorPrintedOnce(t *testing.T) {
	var b bytes.Buffer
	if got := printError(&b, failf("wlc export", "the selection is empty")); got != exitInvalid || b.String() != "wlc export: the selection is empty\n" {
		t.Errorf("printError(commandError) = %d, %q", got, b.String())
	}
	b.Reset()
	if got := printError(&b, errReported); got != exitInvalid || b.Len() != 0 {
		t.Errorf("printError(errReported) = %d, %q; want 1 and nothing printed", got, b.String())
	}
}
