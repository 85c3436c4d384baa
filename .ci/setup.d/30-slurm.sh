# shellcheck shell=bash
# Sourced by .ci/run (bash, set -euo pipefail, cwd = repo root): installs
# Slurm, starts the 2-node test cluster from testdata/slurm and exports where
# it is, so internal/testrig/slurmtest.Require finds it. Sourcing it again is cheap:
# nothing is installed twice and a healthy cluster is reused.

wlc_slurm_pkgs=(slurmctld slurmd slurm-client munge libslurm-dev gcc
  # srun --mpi=pmix: Slurm's pmix plugin dlopens pmix2/lib/libpmix.so,
  # which only the -dev package provides.
  libpmix2 libpmix-dev)
wlc_slurm_missing=()
for wlc_slurm_pkg in "${wlc_slurm_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$wlc_slurm_pkg" 2>/dev/null | grep -q 'install ok installed' ||
    wlc_slurm_missing+=("$wlc_slurm_pkg")
done
if [ ${#wlc_slurm_missing[@]} -gt 0 ]; then
  echo "slurm: installing ${wlc_slurm_missing[*]}"
  if [ -z "${WLC_APT_UPDATED:-}" ]; then
    apt-get update -qq
    export WLC_APT_UPDATED=1
  fi
  # Postinst scripts try to start the services; without systemd that is
  # refused harmlessly, and start.sh runs the daemons itself.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    "${wlc_slurm_missing[@]}" >/dev/null
fi
unset wlc_slurm_pkgs wlc_slurm_missing wlc_slurm_pkg

export WLC_SLURM_DIR=${WLC_SLURM_DIR:-/tmp/wlc-slurm}
# Registered before starting so a half-started cluster is stopped too.
CLEANUP+=("bash $(printf %q "$PWD/testdata/slurm/stop.sh")")
wlc_slurm_env=$(bash testdata/slurm/start.sh)
eval "$wlc_slurm_env"
unset wlc_slurm_env
echo "slurm: cluster up, SLURM_CONF=$SLURM_CONF"
