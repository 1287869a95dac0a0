#!/bin/sh
# The Hugging Face Hub SDK oracle (hf_oracle.py): huggingface_hub's
# HfFileSystem (pinned in requirements.txt) and Sluice against the same
# loopback fakes of the Hub and its CDN. The venv is
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
"$venv/bin/python" "$here/hf_oracle.py"
