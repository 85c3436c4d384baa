# wlc's client tools install (backends/runner/tools.sh), run with bash where
# the clients run, while the server loads (its output is the job's
# tools.log):
#   bash -c "$WLC_TOOLS_SH" wlc-tools VENV NAME MODE MODULES PACKAGES...
# Four words per tool: MODE is install, or image when the profile says the
# image ships the tool; MODULES and PACKAGES are space-separated. A tool
# whose modules the image's python3 imports is used as it is. A missing
# one is pip-installed (3 attempts) into the virtual environment VENV,
# made with --system-site-packages so the clients still see the image's
# packages, while the image's own Python (the server's) is never written:
# a pin a tool's install brings (bfcl-eval's numpy) shadows the image's
# package for the clients only. A VENV that exists already (a cache the
# job was pointed at) is reused: what it has is not installed again.
# Exits 127 naming every tool still missing.
set -u
wlc_tools_log() { printf '[wlc tools] %s\n' "$*" >&2; }
if ! command -v python3 >/dev/null 2>&1; then
  wlc_tools_log "python3 is not on PATH here, and every client tool needs it"
  exit 127
fi
venv=$1
shift
# wlc_tools_check PYTHON NAME MODE MODULES PACKAGES...: one line per tool
# whose modules PYTHON cannot find: NAME, MODE, PACKAGES and the missing
# modules, tab-separated (one interpreter for every tool: it starts slowly).
wlc_tools_check() {
  "$1" -c 'import importlib.util, sys
a = sys.argv[1:]
for i in range(0, len(a) - 3, 4):
    missing = [m for m in a[i + 2].split() if importlib.util.find_spec(m) is None]
    if missing:
        print("\t".join([a[i], a[i + 1], a[i + 3], " ".join(missing)]))' "${@:2}"
}
# wlc_tools_install PACKAGE...: pip install into the venv, 3 attempts,
# waiting WLC_TOOLS_RETRY_S (10) seconds, then twice that.
wlc_tools_install() {
  local attempt wait=${WLC_TOOLS_RETRY_S:-10}
  for attempt in 1 2 3; do
    "$venv/bin/python3" -m pip install --quiet "$@" >&2 && return 0
    [ "$attempt" -lt 3 ] || break
    wlc_tools_log "pip install $* failed (attempt $attempt of 3); retrying in $((attempt * wait))s"
    sleep "$((attempt * wait))"
  done
  wlc_tools_log "pip install $* failed 3 times"
  return 1
}
# wlc_tools_missing PYTHON: the tools of "$@" (the script's arguments)
# PYTHON cannot import, as wlc_tools_check prints them, into report.
tools=("$@")
report=''
wlc_tools_missing() { report=$(wlc_tools_check "$1" "${tools[@]}") || exit 127; }
failed=() install=() names=() name='' mode='' packages='' missing=''
wlc_tools_missing python3
if [ -n "$report" ] && [ -x "$venv/bin/python3" ]; then
  wlc_tools_log "reusing the virtual environment $venv"
  wlc_tools_missing "$venv/bin/python3"
fi
while IFS=$'\t' read -r name mode packages missing; do
  [ -n "$name" ] || continue
  if [ "$mode" = image ]; then
    wlc_tools_log "$name: the profile says the image ships it (image_tools), but python3 cannot import $missing; install $packages in the image or drop $name from image_tools"
    failed+=("$name")
  else
    wlc_tools_log "$name: installing $packages into $venv (python3 cannot import $missing)"
    read -ra more <<<"$packages"
    install+=("${more[@]}")
    names+=("$name")
  fi
done <<<"$report"
if [ "${#failed[@]}" -gt 0 ]; then
  wlc_tools_log "missing: ${failed[*]}"
  exit 127
fi
if [ "${#install[@]}" -gt 0 ]; then
  if [ ! -x "$venv/bin/python3" ] && ! python3 -m venv --system-site-packages "$venv" >&2; then
    wlc_tools_log "python3 -m venv $venv failed (a Debian or Ubuntu image needs python3-venv); install ${names[*]} in the image and list them in the profile's image_tools"
    wlc_tools_log "missing: ${names[*]}"
    exit 127
  fi
  if ! wlc_tools_install "${install[@]}"; then
    wlc_tools_log "missing: ${names[*]}"
    exit 127
  fi
  wlc_tools_missing "$venv/bin/python3"
  while IFS=$'\t' read -r name mode packages missing; do
    if [ -n "$name" ]; then
      wlc_tools_log "$name: $venv/bin/python3 still cannot import $missing after installing $packages"
      failed+=("$name")
    fi
  done <<<"$report"
  if [ "${#failed[@]}" -gt 0 ]; then
    wlc_tools_log "missing: ${failed[*]}"
    exit 127
  fi
fi
wlc_tools_log "every client tool is there: $(for ((i = 0; i < ${#tools[@]}; i += 4)); do printf '%s ' "${tools[i]}"; done)"
