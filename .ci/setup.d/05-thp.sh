# shellcheck shell=bash
# internal/hugeheap's test checks that wlc's heap is advised for transparent
# huge pages (MADV_HUGEPAGE), which the kernel honours unless its policy is
# "never". Most kernels ship "madvise" (the case on the machines wlc is
# built on); if this one says never, set madvise, the default that lets a
# process ask. Sourced by .ci/run (bash, set -euo pipefail); also runnable
# alone: bash .ci/setup.d/05-thp.sh

thp_policy() {
  local f=/sys/kernel/mm/transparent_hugepage/enabled
  if [ ! -r "$f" ]; then
    echo "transparent huge pages: $f is absent (a kernel without THP); internal/hugeheap's test will fail in CI" >&2
    return 0
  fi
  if grep -q '\[never\]' "$f"; then
    echo "transparent huge pages: policy is never; setting madvise"
    echo madvise > "$f"
  fi
  echo "transparent huge pages: $(cat "$f")"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
fi
thp_policy
unset -f thp_policy
