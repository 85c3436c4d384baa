# wlc's client tools check (backends/runner/tools.sh), run with bash where
# the clients run, before the server starts:
#   bash -c "$WLC_TOOLS_SH" wlc-tools NAME MODE MODULES PACKAGES... [-- CMD...]
# Four words per tool: MODE is install, or image when the profile says the
# image ships the tool; MODULES and PACKAGES are space-separated. Every
# tool's Python modules must import with python3; a missing one is
# installed with pip (in the active virtualenv, else --user; 3 attempts)
# unless MODE is image. Exits 127 naming every tool still missing, else
# runs CMD (exec) when given.
set -u
wlc_tools_log() { printf '[wlc tools] %s\n' "$*" >&2; }
if ! command -v python3 >/dev/null 2>&1; then
  wlc_tools_log "python3 is not on PATH here, and every client tool needs it"
  exit 127
fi
# wlc_tools_check NAME MODE MODULES PACKAGES...: one line per tool whose
# modules python3 cannot find: NAME, MODE, PACKAGES and the missing
# modules, tab-separated (one python3 for every tool: it starts slowly).
wlc_tools_check() {
  python3 -c 'import importlib.util, sys
a = sys.argv[1:]
for i in range(0, len(a) - 3, 4):
    missing = [m for m in a[i + 2].split() if importlib.util.find_spec(m) is None]
    if missing:
        print("\t".join([a[i], a[i + 1], a[i + 3], " ".join(missing)]))' "$@"
}
wlc_tools_in_venv() { python3 -c 'import sys; sys.exit(0 if sys.prefix != sys.base_prefix else 1)'; }
# wlc_tools_pip ARG...: pip into the virtualenv, else into the user's site
# (PEP 668 images refuse system installs), as perf-eval's jobs did.
wlc_tools_pip() {
  if wlc_tools_in_venv; then
    python3 -m pip "$@"
  else
    PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip "$@" --user
  fi
}
# wlc_tools_install PACKAGE...: pip install, 3 attempts, waiting
# WLC_TOOLS_RETRY_S (10) seconds, then twice that.
wlc_tools_install() {
  local attempt wait=${WLC_TOOLS_RETRY_S:-10}
  if ! python3 -m pip --version >/dev/null 2>&1; then
    wlc_tools_log "pip is missing; bootstrapping it with ensurepip"
    if wlc_tools_in_venv; then python3 -m ensurepip --upgrade; else python3 -m ensurepip --upgrade --user; fi >&2 || true
  fi
  for attempt in 1 2 3; do
    wlc_tools_pip install --quiet "$@" >&2 && return 0
    [ "$attempt" -lt 3 ] || break
    wlc_tools_log "pip install $* failed (attempt $attempt of 3); retrying in $((attempt * wait))s"
    sleep "$((attempt * wait))"
  done
  wlc_tools_log "pip install $* failed 3 times"
  return 1
}
tools=()
while [ "$#" -ge 4 ] && [ "$1" != -- ]; do
  tools+=("$1" "$2" "$3" "$4")
  shift 4
done
failed=() install=() name='' mode='' packages='' missing=''
report=$(wlc_tools_check "${tools[@]}") || exit 127
while IFS=$'\t' read -r name mode packages missing; do
  [ -n "$name" ] || continue
  if [ "$mode" = image ]; then
    wlc_tools_log "$name: the profile says the image ships it (image_tools), but python3 cannot import $missing; install $packages in the image or drop $name from image_tools"
    failed+=("$name")
  else
    wlc_tools_log "$name: installing $packages (python3 cannot import $missing)"
    read -ra more <<<"$packages"
    install+=("${more[@]}")
  fi
done <<<"$report"
if [ "${#failed[@]}" -gt 0 ]; then
  wlc_tools_log "missing: ${failed[*]}; nothing was started"
  exit 127
fi
if [ "${#install[@]}" -gt 0 ] && wlc_tools_install "${install[@]}"; then
  report=$(wlc_tools_check "${tools[@]}") || exit 127
  while IFS=$'\t' read -r name mode packages missing; do
    if [ -n "$name" ] && [ "$mode" = install ]; then
      wlc_tools_log "$name: python3 still cannot import $missing after installing $packages"
      failed+=("$name")
    fi
  done <<<"$report"
elif [ "${#install[@]}" -gt 0 ]; then
  while IFS=$'\t' read -r name mode packages missing; do
    if [ -n "$name" ] && [ "$mode" = install ]; then failed+=("$name"); fi
  done <<<"$report"
fi
if [ "${#failed[@]}" -gt 0 ]; then
  wlc_tools_log "missing: ${failed[*]}; nothing was started"
  exit 127
fi
wlc_tools_log "every client tool is there: $(for ((i = 0; i < ${#tools[@]}; i += 4)); do printf '%s ' "${tools[i]}"; done)"
if [ "${1:-}" = -- ]; then
  shift
  exec "$@"
fi
