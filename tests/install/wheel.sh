#!/usr/bin/env bash
# The manylinux wheel as a user installs it where they train (`./dev test`'s
# "wheel" stage: CI, or SLUICE_WHEEL=1; it needs the package registry).
#   tests/install/wheel.sh BUILD_DIR
# After tests/install/run.sh BUILD_DIR, which leaves the wheel `pip wheel .`
# built in BUILD_DIR-pip: bindings/python/wheel.sh repairs it as `./dev
# wheel` does; the repaired wheel's name and tag, and every library its ELF
# files need, are checked against the manylinux policy (wheel/needed.py), and it is
# installed with its pinned dependencies (wheel/requirements.txt) into a
# fresh venv that does not see Debian's packages, where wheel/test_wheel.py
# imports it, writes MDS datasets and streams them, locally and from s3rver,
# run from a folder outside the source tree. Then `pip install .` with build
# isolation (bindings/python/wheel.sh isolated) and its package used as
# tests/install/run.sh uses the offline one. Last, the sdist is made, its
# file list checked, and a wheel built from it.
set -euo pipefail
cd "$(dirname "$0")/../.."
src=$PWD
unset SLUICE_LIBRARY PYTHONPATH LD_LIBRARY_PATH
fail() { echo "tests/install/wheel.sh: $*" >&2; exit 1; }
[ $# = 1 ] || fail "usage: tests/install/wheel.sh BUILD_DIR"
build=$(realpath "$1")
raw=$(echo "$build"-pip/sluice-*.whl)
[ -f "$raw" ] || fail "no wheel in $build-pip: run tests/install/run.sh $1 first"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$SECONDS

version=$(basename "$raw" | cut -d- -f2)
export SLUICE_WHEEL_TOOLS_VENV="${SLUICE_WHEEL_TOOLS_VENV:-$src/build/wheel-tools-venv}"
# Kept beside the raw wheel: the engines stage installs this one when it is there.
wheel=$(bindings/python/wheel.sh repair "$raw" "$build-pip/manylinux") || fail "the repair failed"
# Debian 12's GCC 12 libstdc++ (GLIBCXX_3.4.30) and glibc symbols up to
# GLIBC_2.34: manylinux_2_35 is the oldest policy that has them both.
plat=manylinux_2_35_x86_64
[ "$(basename "$wheel")" = "sluice-$version-py3-none-$plat.whl" ] || fail "repaired wheel: $wheel"
tools="$SLUICE_WHEEL_TOOLS_VENV/bin"
PATH="$tools:$PATH" auditwheel show "$wheel" >"$work/show.txt" 2>&1 || { cat "$work/show.txt"; fail "auditwheel show"; }
tr -s ' \n' ' ' <"$work/show.txt" | grep -qF "is consistent with the following platform tag: \"$plat\"" ||
  { cat "$work/show.txt"; fail "auditwheel show does not find the wheel $plat"; }
"$tools/python" tests/install/wheel/needed.py "$wheel" "${plat%_x86_64}" || fail "a library the wheel needs is missing"

# A fresh venv that sees none of Debian's packages (and so none of the
# libraries' -dev packages' Python side either): the wheel and numpy only.
/usr/bin/python3 -m venv "$work/env"
grep -qx 'include-system-site-packages = false' "$work/env/pyvenv.cfg" || fail "the venv sees system packages"
"$work/env/bin/pip" -q --disable-pip-version-check install -c tests/install/wheel/requirements.txt \
  "$wheel" pytest >"$work/pip.log" 2>&1 || { cat "$work/pip.log"; fail "pip install of the wheel"; }
mkdir "$work/run"
cp tests/install/wheel/test_wheel.py "$work/run/"
(cd "$work/run" && SLUICE_TEST_FIXTURES="$src/tests/bindings/python" \
   SLUICE_WHEEL_VERSION="$version" "$work/env/bin/python" -m pytest -q -p no:cacheprovider test_wheel.py) ||
  fail "the installed wheel failed"
# `pip install .` with build isolation, the README's first form: pip takes
# meson-python and meson from the registry (pinned by
# bindings/python/build-constraints.txt) into a venv that sees no Debian
# package, and the package it installs works as the offline form's does.
iso_start=$SECONDS
iso=$(bindings/python/wheel.sh isolated "$build" "$work/isolated") || fail "the isolated pip wheel failed"
iso_venv="$build-pip/isolated-venv"
"$iso_venv/bin/pip" -q --disable-pip-version-check install -c tests/install/wheel/requirements.txt \
  "$iso" >"$work/pip-isolated.log" 2>&1 || { cat "$work/pip-isolated.log"; fail "pip install of the isolated wheel"; }
mkdir "$work/isolated-run"
cp tests/install/use_package.py "$work/isolated-run/"
modules=$(cd bindings/python/sluice && ls -- *.py | sed 's/\.py$//' | paste -sd, -)
(cd "$work/isolated-run" && . "$iso_venv/bin/activate" && python use_package.py "$version" "$modules" "$iso") ||
  fail "the package pip installed with build isolation failed"
echo "tests/install/wheel.sh: pip install . with build isolation built and used in $((SECONDS - iso_start)) s" >&2
# The sdist: exactly the tracked files and PKG-INFO, so that what builds
# from the tree builds from it (a clone's CI has every file tracked).
sdist=$(bindings/python/wheel.sh sdist "$build" "$work/sdist") || fail "the sdist failed"
[ "$(basename "$sdist")" = "sluice-$version.tar.gz" ] || fail "sdist: $sdist"
tar tzf "$sdist" | grep -v '/$' | sed "s|^sluice-$version/||" | sort >"$work/sdist.txt"
{ git ls-files; echo PKG-INFO; } | sort | diff -u - "$work/sdist.txt" || fail "the sdist holds other files"
# Read whole before grep: grep -q stops at the match, and under pipefail
# tar's SIGPIPE on a long PKG-INFO (the README is in it) fails the check.
tar xzf "$sdist" -O "sluice-$version/PKG-INFO" >"$work/PKG-INFO"
grep -qx "Version: $version" "$work/PKG-INFO" || fail "the sdist's PKG-INFO"
# The sdist builds: `pip wheel` of the unpacked sdist (Debian's meson-python,
# as `build` uses), a wheel of the same name holding the same files as the
# tree's. Its build folder sits inside the unpacked tree, where ccache (based
# there) sees BUILD_DIR-wheel's compile commands and serves every object.
sdist_start=$SECONDS
tar xzf "$sdist" -C "$work"
unpacked="$work/sluice-$version"
(cd "$unpacked" && CCACHE_BASEDIR="$unpacked" "$build-pip/venv/bin/pip" wheel -q \
   --disable-pip-version-check --no-build-isolation --no-deps \
   --config-settings "builddir=$unpacked/build-wheel" -w "$work/from-sdist" .) \
  >"$work/pip-sdist.log" 2>&1 || { cat "$work/pip-sdist.log"; fail "pip wheel of the sdist"; }
from_sdist=$(echo "$work"/from-sdist/sluice-*.whl)
[ "$(basename "$from_sdist")" = "$(basename "$raw")" ] || fail "the sdist's wheel: $from_sdist"
names() { "$build-pip/venv/bin/python" -c 'import sys, zipfile
print("\n".join(sorted(zipfile.ZipFile(sys.argv[1]).namelist())))' "$1"; }
diff -u <(names "$raw") <(names "$from_sdist") || fail "the sdist's wheel holds other files than the tree's"
echo "tests/install/wheel.sh: the sdist's wheel built in $((SECONDS - sdist_start)) s" >&2

echo "tests/install/wheel.sh: ok: $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB) in $((SECONDS - start)) s"
