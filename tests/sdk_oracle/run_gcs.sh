#!/bin/sh
# The GCS SDK oracle (gcs_oracle.py): google-auth (pinned in requirements.txt)
# and Sluice against the same loopback fakes. The venv is venv.sh's.
# Needs build/bindings/c/libsluice.so (or $SLUICE_LIBRARY).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/venv.sh"
export SLUICE_LIBRARY="${SLUICE_LIBRARY:-$root/build/bindings/c/libsluice.so}"
"$venv/bin/python" "$here/gcs_oracle.py"
