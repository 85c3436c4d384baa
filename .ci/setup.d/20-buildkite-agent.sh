# shellcheck shell=bash
# Installs buildkite-agent for internal/testrig/bktest, which checks generated pipelines
# with the agent's own `pipeline upload --dry-run`. Sourced by .ci/run (bash,
# set -euo pipefail); also runnable alone: bash .ci/setup.d/20-buildkite-agent.sh
#
# Pinned to v3.78.0: newer tags need a newer Go than the toolchain here or
# import drjosh.dev/zzglob, which the module proxy refuses (see
# ../shared/reference/backends.md §2). internal/testrig/bktest checks the same version.

bk_agent_install() {
  local want="3.78.0"
  local have=""
  if command -v buildkite-agent >/dev/null 2>&1; then
    have="$(buildkite-agent --version 2>/dev/null || true)"
  fi
  # `--version` prints "buildkite-agent version 3.78.0+x..dirty" for a go-install build.
  case "$have" in
    "buildkite-agent version $want" | "buildkite-agent version $want+"*)
      echo "buildkite-agent $want already on PATH: $(command -v buildkite-agent)"
      return 0
      ;;
  esac

  local bindir
  bindir="$(go env GOBIN)"
  if [ -z "$bindir" ]; then
    bindir="$(go env GOPATH)"
    bindir="${bindir%%:*}/bin"
  fi
  mkdir -p "$bindir"

  # go install names the binary "agent" (last path element without /v3); build
  # into a scratch dir so no stray "agent" lands on PATH, then install it under
  # the name the tests look up.
  local tmp
  tmp="$(mktemp -d)"
  CLEANUP+=("rm -rf '$tmp'")
  echo "building buildkite-agent v$want (about 75 s)"
  local start=$SECONDS
  # Run outside the checkout with GOFLAGS cleared: pkg@version ignores go.mod,
  # and a -mod=vendor style GOFLAGS would make go install refuse.
  (cd "$tmp" && GOBIN="$tmp" GOFLAGS= go install "github.com/buildkite/agent/v3@v$want")
  install -m 0755 "$tmp/agent" "$bindir/buildkite-agent"
  rm -rf "$tmp"
  echo "installed $bindir/buildkite-agent in $((SECONDS - start)) s"

  case ":$PATH:" in
    *":$bindir:"*) ;;
    *) export PATH="$bindir:$PATH" ;;
  esac
  # Another buildkite-agent earlier on PATH would shadow ours and make the
  # tests fail on the version check; say so here rather than there.
  have="$(buildkite-agent --version)"
  case "$have" in
    "buildkite-agent version $want"*) ;;
    *)
      echo "buildkite-agent on PATH ($(command -v buildkite-agent)) reports '$have', want $want" >&2
      return 1
      ;;
  esac
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  CLEANUP=()
fi
bk_agent_install
unset -f bk_agent_install
