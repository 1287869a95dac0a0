#!/usr/bin/env bash
# Mosaic's own test suite as the yardstick of the drop-in (issue 23): runs
# tests/ of mosaicml/streaming, at the commit the compat data came from,
# once against Mosaic's source (the baseline: what Mosaic passes on this
# machine) and once against Sluice through `import sluice.streaming_alias`,
# then prints the pass rates per group and Sluice's top failure causes.
# Not a CI test: it needs the mirror of mosaicml/streaming.
#
#   tests/bindings/python/mosaic_suite/run.sh [mosaic|sluice|both|count] [test_x.py ...]
#
# Environment: MOSAIC_MIRROR (required: a git dir of mosaicml/streaming's source),
# MOSAIC_COMMIT (default 89e7bb90), SLUICE_LIBRARY (default build/bindings/c/libsluice.so),
# OUT (default /tmp/mosaic_suite), MOSAIC_SUITE_TEST_TIMEOUT (seconds per test, default 300),
# MOSAIC_SUITE_CHUNK (test functions per pytest process, default 8).
# Reports: $OUT/<mosaic|sluice>/<test file>.<chunk>.xml and .log, $OUT/sluice_failures.tsv.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../../../.." && pwd)"
MOSAIC_MIRROR="${MOSAIC_MIRROR:?set MOSAIC_MIRROR to a git dir of mosaicml/streaming}"
MOSAIC_COMMIT="${MOSAIC_COMMIT:-89e7bb90}"
OUT="${OUT:-/tmp/mosaic_suite}"
export SLUICE_LIBRARY="${SLUICE_LIBRARY:-$REPO/build/bindings/c/libsluice.so}"
PY=/usr/bin/python3
CHUNK="${MOSAIC_SUITE_CHUNK:-8}"
what="${1:-both}"; shift || true

# Mosaic's imports that Debian packages; transformers and moto it does not
# (stand-ins in stubs/, see stubs/README.md).
APT=(python3-pytest python3-numpy python3-torch python3-pil python3-pandas python3-boto3
     python3-zstd python3-xxhash python3-snappy python3-filelock python3-catalogue python3-torchvision)
missing=()
for p in "${APT[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}" >&2
  sudo_=""; [ "$(id -u)" = 0 ] || sudo_=sudo
  $sudo_ apt-get update -qq && $sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# A clean copy of Mosaic at that commit: src/ (source and tests, the
# baseline) and tests-only/ (tests alone, so `streaming` can only be Sluice).
mkdir -p "$OUT"
if [ ! -d "$OUT/src/tests" ]; then
  rm -rf "$OUT/src" "$OUT/tests-only"
  mkdir -p "$OUT/src" "$OUT/tests-only"
  git --git-dir="$MOSAIC_MIRROR" archive "$MOSAIC_COMMIT" | tar -x -C "$OUT/src"
  cp -r "$OUT/src/tests" "$OUT/tests-only/"
fi

files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  files=($(cd "$OUT/src" && find tests -name 'test_*.py' | sort))
else
  files=("${files[@]/#/tests/}")
fi

# No test may reach a metadata service or use this machine's credentials.
export AWS_EC2_METADATA_DISABLED=true
unset AWS_PROFILE AWS_CONFIG_FILE AWS_SHARED_CREDENTIALS_FILE GOOGLE_APPLICATION_CREDENTIALS || true

run() {  # run <mosaic|sluice>
  local target="$1" root pypath alias
  if [ "$target" = mosaic ]; then
    root="$OUT/src"; pypath="$HERE:$HERE/stubs"; alias=0
  else
    root="$OUT/tests-only"; pypath="$REPO/bindings/python:$HERE:$HERE/stubs"; alias=1
    [ -f "$SLUICE_LIBRARY" ] || { echo "no $SLUICE_LIBRARY: ninja -C build bindings/c/libsluice.so.4" >&2; exit 1; }
  fi
  mkdir -p "$OUT/$target"
  for f in "${files[@]}"; do
    local name; name="$(basename "$f" .py)"
    rm -f "$OUT/$target/$name".*xml "$OUT/$target/$name".*log
    echo "== $target $f" >&2
    # In chunks of $CHUNK test functions (all their parameters; some
    # parameters are random temporary paths, so ids differ per collection),
    # one process each: Mosaic's test_streaming leaks more descriptors in one
    # process than the 20000 allowed here.
    local ids=() part=0
    mapfile -t ids < <(cd "$OUT/src" && PYTHONPATH="$HERE:$HERE/stubs" "$PY" -m pytest \
        -c "$HERE/pytest.ini" --rootdir "$OUT/src" --collect-only -q "$f" 2>/dev/null |
        grep '::' | sed 's/\[.*//' | awk '!seen[$0]++')
    [ ${#ids[@]} -gt 0 ] || ids=("$f")  # a file that fails to collect: run it for its error
    for ((i = 0; i < ${#ids[@]}; i += CHUNK)); do
      (cd "$root" && PYTHONPATH="$pypath" MOSAIC_SUITE_ALIAS=$alias timeout 3600 \
         "$PY" -m pytest -c "$HERE/pytest.ini" --rootdir "$root" -p suite_plugin -q \
         --junitxml="$OUT/$target/$name.$part.xml" "${ids[@]:i:CHUNK}" \
         >"$OUT/$target/$name.$part.log" 2>&1) || true
      tail -1 "$OUT/$target/$name.$part.log" >&2
      part=$((part + 1))
    done
  done
}

case "$what" in
  mosaic) run mosaic ;;
  sluice) run sluice ;;
  both) run mosaic; run sluice ;;
  count) ;;
  *) echo "usage: $0 [mosaic|sluice|both|count] [test_x.py ...]" >&2; exit 2 ;;
esac
"$PY" "$HERE/count.py" "$OUT"
