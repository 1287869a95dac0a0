# The SDK oracles' venv, sourced by run_gcs.sh, run_hf.sh, run_databricks.sh
# and run_oci.sh (`here` set to this folder), which then run `$venv/bin/python`:
# $SLUICE_SDK_ORACLE_VENV when set (kept between runs, shared by the
# oracles; ./dev makes it while CI compiles), else a temporary folder
# removed at exit. Holds the SDKs pinned in requirements.txt; needs the
# network for pip only.
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
