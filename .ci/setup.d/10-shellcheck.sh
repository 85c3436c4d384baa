# shellcheck shell=bash
# Installs what the runner backends' tests need to run the generated job
# scripts for real: shellcheck (every golden script is checked), curl (the
# scripts' health wait), python3 (the result tool the scripts run where vllm
# runs) and setsid (the native runner's process group). Debian packages only.
# Sourced by .ci/run (bash, set -euo pipefail); also runnable alone:
#   bash .ci/setup.d/10-shellcheck.sh

script_tools_install() {
  local pkgs=() tool pkg
  for tool in shellcheck:shellcheck curl:curl python3:python3 setsid:util-linux; do
    pkg=${tool#*:}
    tool=${tool%%:*}
    command -v "$tool" >/dev/null 2>&1 || pkgs+=("$pkg")
  done
  if [ "${#pkgs[@]}" -gt 0 ]; then
    echo "installing ${pkgs[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${pkgs[@]}"
  fi
  echo "$(shellcheck --version | sed -n 's/^version: /shellcheck /p'), $(python3 --version), $(curl --version | head -n 1 | cut -d' ' -f1-2)"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
fi
script_tools_install
unset -f script_tools_install
