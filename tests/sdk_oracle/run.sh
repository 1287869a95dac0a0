#!/bin/sh
# The SDK oracle: creates a virtual environment with the pinned SDKs
# (requirements.txt) under $SLUICE_ORACLE_VENV_DIR (default: a temporary
# folder, removed at exit), then runs each oracle script with it against
# the library in build/ (or $SLUICE_LIBRARY). Needs network for pip only;
# every endpoint the oracles use is a loopback fake.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
if [ -n "${SLUICE_ORACLE_VENV_DIR:-}" ]; then
  mkdir -p "$SLUICE_ORACLE_VENV_DIR"
  venv="$SLUICE_ORACLE_VENV_DIR/sdk-oracle"
else
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  venv="$tmp/sdk-oracle"
fi
if [ ! -x "$venv/bin/python" ]; then
  /usr/bin/python3 -m venv "$venv"
fi
"$venv/bin/pip" install -q --disable-pip-version-check -r "$here/requirements.txt"
export SLUICE_LIBRARY="${SLUICE_LIBRARY:-$root/build/bindings/c/libsluice.so}"
"$venv/bin/python" "$here/gcs_oracle.py"
