#!/bin/sh
# The Databricks SDK oracle (databricks_oracle.py): databricks-sdk's
# Config() (pinned in requirements.txt) and Sluice against the same
# loopback fake of a workspace (OIDC, token endpoint, Files API). The venv is
# $SLUICE_SDK_ORACLE_VENV when set (kept between runs, shared with the other
# oracles), else a temporary folder removed at exit. Needs the network for pip
# only, build/bindings/c/libsluice.so (or $SLUICE_LIBRARY) and
# build/bindings/cli/sluice (or $SLUICE_CLI).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
if [ -n "${SLUICE_SDK_ORACLE_VENV:-}" ]; then
  venv="$SLUICE_SDK_ORACLE_VENV"
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
"$venv/bin/python" "$here/databricks_oracle.py"
