#!/bin/sh
# The engines stage: Sluice with the real engines its users run (pyspark in
# local mode, Java from the machine) and mosaicml-streaming from the registry
# as the oracle, the trainers (trainers.txt), all pinned (requirements.txt,
# oracle.txt, trainers.txt, constraints.txt).
# The venv is $SLUICE_ENGINES_VENV when set, else build/engines-venv; it sees
# Debian's python3 packages (--system-site-packages: numpy, pandas, torch,
# torchvision, pytest). pip's downloads are kept in $PIP_CACHE_DIR (default
# build/pip-cache), so a second run downloads nothing. Needs the network for
# pip only, and build/bindings/c/libsluice.so (or $SLUICE_LIBRARY); or,
# with SLUICE_ENGINES_WHEEL=FILE (a wheel tests/install built), that wheel
# installed in the venv, which the tests then import (the package and its
# own engine), nothing taken from the source tree.
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
want=$(cat "$here/requirements.txt" "$here/oracle.txt" "$here/trainers.txt" \
  "$here/constraints.txt")
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  pip install -r "$here/requirements.txt" -c "$here/constraints.txt"
  pip install --no-deps -r "$here/oracle.txt" -r "$here/trainers.txt"
  printf '%s' "$want" >"$stamp"
fi
[ "${1:-}" != --prepare ] || exit 0
if [ -n "${SLUICE_ENGINES_WHEEL:-}" ]; then
  [ -f "$SLUICE_ENGINES_WHEEL" ] || { echo "SLUICE_ENGINES_WHEEL: no file $SLUICE_ENGINES_WHEEL" >&2; exit 1; }
  pip install --no-deps --force-reinstall "$SLUICE_ENGINES_WHEEL"
  unset SLUICE_LIBRARY
  export SLUICE_ENGINES_EXPECT_WHEEL=1  # conftest.py checks where sluice comes from
else
  # A wheel a previous run installed would hide nothing (PYTHONPATH comes
  # first), but the venv should hold only what this run tests.
  "$venv/bin/pip" uninstall -q -y sluice >/dev/null 2>&1 || true
  export SLUICE_LIBRARY="${SLUICE_LIBRARY:-$root/build/bindings/c/libsluice.so}"
  export PYTHONPATH="$root/bindings/python${PYTHONPATH:+:$PYTHONPATH}"
fi
cd "$root"
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider tests/engines "$@"
