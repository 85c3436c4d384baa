# wlc's preflight (backends/runner/preflight.sh), run with bash where the
# server will run, before it starts:
#   bash -c "$WLC_PREFLIGHT_SH" wlc-preflight ENGINE [NAME=VALUE...] OPTION... [-- CMD...]
# NAME=VALUE are the workload's environment (WLC_ENV): the engine is asked,
# and CMD run, with it, as the server will be; this script and its own
# python3 run without it.
# Asks the image for its engine's version and its server's options (vLLM:
# `vllm --version` and `vllm serve --help=all`; SGLang: the sglang
# distribution's version and `python3 -m sglang.launch_server --help`) and
# checks that each OPTION the job passes is one of them, so an image that
# lacks a flag fails in seconds, naming the flag and the version, instead
# of after the model loaded. Exits 2 then (127 when the engine is missing);
# otherwise runs CMD (exec) when given.
set -u
wlc_pf_log() { printf '[wlc preflight] %s\n' "$*" >&2; }
engine=$1
shift
senv=()
while [ "$#" -gt 0 ] && [[ $1 =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; do
  senv+=("$1")
  shift
done
# wlc_pf_has PROGRAM: PROGRAM is on the server's PATH.
wlc_pf_has() { env "${senv[@]}" sh -c 'command -v "$1"' wlc-preflight "$1" >/dev/null 2>&1; }
opts=()
while [ "$#" -gt 0 ] && [ "$1" != -- ]; do
  opts+=("$1")
  shift
done
[ "$#" -eq 0 ] || shift
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
if [ "$engine" = vllm ]; then
  name=vLLM help='vllm serve --help=all'
  if ! wlc_pf_has vllm; then
    wlc_pf_log "vllm is not on PATH here; the image must have vLLM"
    exit 127
  fi
  # Both import vLLM, which takes seconds: at once.
  env "${senv[@]}" vllm --version >"$tmp/version" 2>"$tmp/version.err" &
  v=$!
  if ! env "${senv[@]}" vllm serve --help=all >"$tmp/help" 2>"$tmp/help.err"; then
    help='vllm serve --help'
    env "${senv[@]}" vllm serve --help >"$tmp/help" 2>"$tmp/help.err" || true
  fi
  wait "$v" || true
else
  name=SGLang help='python3 -m sglang.launch_server --help'
  if ! wlc_pf_has python3; then
    wlc_pf_log "python3 is not on PATH here; the image must have SGLang's python3"
    exit 127
  fi
  env "${senv[@]}" python3 -c 'import importlib.metadata as m; print(m.version("sglang"))' >"$tmp/version" 2>"$tmp/version.err" &
  v=$!
  env "${senv[@]}" python3 -m sglang.launch_server --help >"$tmp/help" 2>"$tmp/help.err" || true
  wait "$v" || true
fi
version=$(tail -n 1 "$tmp/version")
[ -n "$version" ] || version='(version unknown)'
# The option strings argparse prints (two to four spaces of indent, then
# "-x, --xx X"), against the job's: vLLM reads --a_b as --a-b and
# --a.b=v as a key of --a's JSON; a unique prefix is argparse's
# abbreviation (refused later by a parser that disallows them, never here:
# a wrong refusal would stop a good job, so short options such as -O3 are
# left to the server too).
missing=$(python3 -c 'import re, sys
known = set()
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r" {1,4}(-{1,2}[A-Za-z0-9].*?)(?:  |$)", line.rstrip("\n"))
    if m:
        for part in re.split(r", (?=-)", m.group(1)):
            known.add(part.split(" ")[0])
if not known:
    print("?")
    sys.exit()
for opt in sys.argv[2:]:
    if opt.startswith("--"):
        name = opt.split("=", 1)[0].split(".", 1)[0]
        dashed = name.replace("_", "-")
        if dashed not in known and name not in known and len([k for k in known if k.startswith(dashed)]) != 1:
            print(opt)' "$tmp/help" "${opts[@]}") || missing='?'
if [ "$missing" = '?' ]; then
  wlc_pf_log "$name $version: \`$help\` listed no options, so the server's options were not checked; its output:"
  tail -n 5 "$tmp/help" "$tmp/help.err" >&2 || true
elif [ -n "$missing" ]; then
  wlc_pf_log "the image's $name $version has no option ${missing//$'\n'/ } (\`$help\` does not list it): use an image whose $name has it, or remove it from the workload; the server was not started"
  exit 2
else
  wlc_pf_log "$name $version; the ${#opts[@]} server option(s) are all in \`$help\`"
fi
if [ "$#" -gt 0 ]; then
  rm -rf "$tmp"
  trap - EXIT
  exec env "${senv[@]}" "$@"
fi
