#!/bin/sh
# The Databricks SDK oracle (databricks_oracle.py): databricks-sdk's
# Config() (pinned in requirements.txt) and Sluice against the same
# loopback fake of a workspace (OIDC, token endpoint, Files API). The venv is venv.sh's.
# Needs build/bindings/c/libsluice.so (or $SLUICE_LIBRARY) and
# build/bindings/cli/sluice (or $SLUICE_CLI).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/venv.sh"
export SLUICE_LIBRARY="${SLUICE_LIBRARY:-$root/build/bindings/c/libsluice.so}"
"$venv/bin/python" "$here/databricks_oracle.py"
