#!/bin/sh
# The Hugging Face Hub SDK oracle (hf_oracle.py): huggingface_hub's
# HfFileSystem (pinned in requirements.txt) and Sluice against the same
# loopback fakes of the Hub and its CDN. The venv is venv.sh's.
# Needs build/bindings/c/libsluice.so (or $SLUICE_LIBRARY) and
# build/bindings/cli/sluice (or $SLUICE_CLI).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/venv.sh"
export SLUICE_LIBRARY="${SLUICE_LIBRARY:-$root/build/bindings/c/libsluice.so}"
"$venv/bin/python" "$here/hf_oracle.py"
