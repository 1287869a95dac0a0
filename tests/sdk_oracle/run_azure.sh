#!/bin/sh
# The Azure SDK oracle (azure_oracle.py): azure-identity (pinned in
# requirements.txt) and Sluice's `sluice whoami` against the same fakes.
# SLUICE_SDK_ORACLE_VENV keeps the venv between runs; SLUICE_CLI names the
# sluice binary (default build/bindings/cli/sluice, built if missing).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${SLUICE_CLI:-}" ] && [ ! -x "$root/build/bindings/cli/sluice" ]; then
  ninja -C "$root/build" -j2 bindings/cli/sluice
fi
exec /usr/bin/python3 "$root/tests/sdk_oracle/azure_oracle.py" "$@"
