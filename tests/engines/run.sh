#!/bin/sh
# The engines stage: Sluice with the real engines its users run (pyspark in
# local mode, Java from the machine) and mosaicml-streaming from the registry
# as the oracle, all pinned (requirements.txt, oracle.txt, constraints.txt).
# The venv is $SLUICE_ENGINES_VENV when set, else build/engines-venv; it sees
# Debian's python3 packages (--system-site-packages: numpy, pandas, torch,
# torchvision, pytest). pip's downloads are kept in $PIP_CACHE_DIR (default
# build/pip-cache), so a second run downloads nothing. Needs the network for
# pip only, and build/bindings/c/libsluice.so (or $SLUICE_LIBRARY).
#   tests/engines/run.sh [pytest arguments]
#   tests/engines/run.sh --prepare   make the venv and stop (./dev does while
#                                    CI compiles)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
venv="${SLUICE_ENGINES_VENV:-$root/build/engines-venv}"
export PIP_CACHE_DIR="${PIP_CACHE_DIR:-$root/build/pip-cache}"
if [ ! -x "$venv/bin/python" ]; then
  /usr/bin/python3 -m venv --system-site-packages "$venv"
fi
pip() { "$venv/bin/pip" -q --disable-pip-version-check "$@"; }
# Installed again only when a pin changed (pip would otherwise re-resolve
# against the registry on every run).
stamp="$venv/engines-requirements"
want=$(cat "$here/requirements.txt" "$here/oracle.txt" "$here/constraints.txt")
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  pip install -r "$here/requirements.txt" -c "$here/constraints.txt"
  pip install --no-deps -r "$here/oracle.txt"
  printf '%s' "$want" >"$stamp"
fi
[ "${1:-}" != --prepare ] || exit 0
export SLUICE_LIBRARY="${SLUICE_LIBRARY:-$root/build/bindings/c/libsluice.so}"
export PYTHONPATH="$root/bindings/python${PYTHONPATH:+:$PYTHONPATH}"
cd "$root"
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider tests/engines "$@"
