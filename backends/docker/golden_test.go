package docker_test

import (
	"testing"

	"github.com/wlcdev/wlc/backends/docker"
	"github.com/wlcdev/wlc/backends/goldentest"
	"github.com/wlcdev/wlc/backends/runner/runnertest"
)

// TestGolden is the backends' golden test (backends/goldentest); every
// script parses with mvdan.cc/sh and passes shellcheck; split for Buildkite
// (runner.Split), it is the same script (runnertest.CheckSplit).
func TestGolden(t *testing.T) {
	goldentest.Run(t, docker.Backend{}, goldentest.Checks{Mode: 0o755, Artifact: runnertest.CheckScript, Case: runnertest.CheckSplit(docker.Backend{})})
}
