# shellcheck shell=bash
# Installs the anchors internal/cmd/wlcbench measures wlc against (its smoke
# test runs in go test): the cue CLI at the version go.mod pins (plain
# `cue vet -c` and `cue export`), and Debian's python3-yaml for perf-eval's
# generate_pipeline.py. Sourced by .ci/run (bash, set -euo pipefail); also
# runnable alone from the checkout root: bash .ci/setup.d/40-wlcbench.sh

wlcbench_tools_install() {
  if ! /usr/bin/python3 -c 'import yaml' >/dev/null 2>&1; then
    echo "installing python3-yaml"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3 python3-yaml
  fi

  local want bindir have=""
  want="$(go list -m -f '{{.Version}}' cuelang.org/go)"
  bindir="$(go env GOPATH)"
  bindir="${bindir%%:*}/bin"
  if [ -x "$bindir/cue" ]; then
    have="$("$bindir/cue" version 2>/dev/null | head -n 1 || true)"
  fi
  if [ "$have" != "cue version $want" ]; then
    echo "installing cue $want (go install)"
    # Outside the checkout with GOFLAGS cleared: pkg@version ignores go.mod.
    (cd / && GOBIN="$bindir" GOFLAGS='' go install "cuelang.org/go/cmd/cue@$want")
  fi
  echo "$("$bindir/cue" version | head -n 1), $(/usr/bin/python3 -c 'import yaml; print("PyYAML", yaml.__version__)')"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
fi
wlcbench_tools_install
unset -f wlcbench_tools_install
