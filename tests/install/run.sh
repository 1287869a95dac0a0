#!/usr/bin/env bash
# Installs Sluice the two ways its users do and uses each install from
# outside the source tree with nothing exported (`./dev test`'s "install"
# phase). usage: tests/install/run.sh BUILD_DIR
#
# C/C++: `meson install` of BUILD_DIR (built already: nothing is compiled
# again) into a staging root; the README's C example, compiled with
# `pkg-config --cflags --libs sluice`, by a meson project through
# dependency('sluice') and by a CMake project through pkg_check_modules,
# prints Mosaic-written datasets exactly as expected/<dataset>.txt. A meson
# project with Sluice as a subproject is configured and its example
# compiled (see that section for why the engine is not built again). The
# C API guide's example (docs/stream_example.c) streams and resumes exactly
# as expected/stream_example.txt.
#
# Python: `pip install --no-build-isolation .` into a fresh venv made with
# --system-site-packages (Debian's numpy, meson-python; no PyPI), then
# use_package.py and the migration guide's example (docs/) with the venv
# activated, from a folder outside the tree.
# The wheel's meson build lives in BUILD_DIR-pip/wheel and is reused by the
# next run: the one full compile this phase costs, once.
set -euo pipefail
cd "$(dirname "$0")/../.."
src=$PWD
build=$(realpath "$1")
unset SLUICE_LIBRARY PYTHONPATH LD_LIBRARY_PATH PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() { echo "tests/install: $*" >&2; exit 1; }
option() {
  meson introspect "$build" --buildoptions |
    /usr/bin/python3 -c 'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == sys.argv[1]))' "$1"
}
abi=$(sed -n 's/^#define SLUICE_ABI_VERSION \([0-9]*\)$/\1/p' bindings/c/sluice.h)
version=$(meson introspect "$build" --projectinfo |
  /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])')
[ -n "$abi" ] && [ -n "$version" ] || fail "no ABI version in sluice.h or no project version"

# ---------------------------------------------------------------- C and C++
stage="$work/stage"
meson install -C "$build" --destdir "$stage" --tags runtime,devel >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; fail "meson install failed"; }
prefix=$(option prefix)
libdir="$prefix/$(option libdir)"
root="$stage$prefix"
(cd "$stage" && find . \( -type f -o -type l \) | sed 's|^\.||' | sort) >"$work/files"
printf '%s\n' "$prefix/bin/sluice" "$prefix/include/sluice/sluice.h" "$libdir/libsluice.so" \
  "$libdir/libsluice.so.$abi" "$libdir/pkgconfig/sluice.pc" | sort >"$work/files.expected"
diff -u "$work/files.expected" "$work/files" || fail "meson install put other files"
[ "$(readlink "$stage$libdir/libsluice.so")" = "libsluice.so.$abi" ] || fail "libsluice.so link"
readelf -d "$stage$libdir/libsluice.so.$abi" | grep -q "Library soname: \[libsluice.so.$abi\]" ||
  fail "the soname is not libsluice.so.$abi"

# The pkg-config file as a staged install is used (paths under the staging root).
export PKG_CONFIG_PATH="$stage$libdir/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$stage"
flags=$(pkg-config --cflags --libs sluice | sed "s/ *$//")  # pkgconf ends it with a space
[ "$flags" = "-I$root/include/sluice -L$stage$libdir -lsluice" ] || fail "pkg-config: $flags"
[ "$(pkg-config --modversion sluice)" = "$version" ] || fail "pkg-config --modversion"

# The README's C example, verbatim (its one ```c block).
mkdir "$work/c"
awk '/^```c$/ {on = 1; next} /^```$/ {on = 0} on' README.md >"$work/c/example.c"
[ -s "$work/c/example.c" ] || fail "no C example in README.md"
# shellcheck disable=SC2086  # pkg-config's flags are words
cc -std=c99 -Wall -Wextra -Werror -pedantic "$work/c/example.c" $flags -o "$work/c/example"
readelf -d "$work/c/example" | grep -q "Shared library: \[libsluice.so.$abi\]" ||
  fail "the example does not need libsluice.so.$abi"
# The staged library is not on the loader's path; an installed one would be.
for dataset in merged quirk_oversized_samples csv_plain; do
  LD_LIBRARY_PATH="$stage$libdir" "$work/c/example" "tests/data/mosaic/mds/$dataset" \
    >"$work/c/$dataset.txt"
  diff -u "tests/install/expected/$dataset.txt" "$work/c/$dataset.txt" ||
    fail "the README's C example printed something else for $dataset"
done

# The C API guide's complete example (docs/stream_example.c): streams,
# checkpoints and resumes a copy of a dataset (its compressed shards are
# decompressed beside them, as Mosaic's are).
# shellcheck disable=SC2086
cc -std=c99 -Wall -Wextra -Werror -pedantic docs/stream_example.c $flags -o "$work/c/stream_example"
cp -r tests/data/mosaic/mds/merged "$work/c/merged"
LD_LIBRARY_PATH="$stage$libdir" "$work/c/stream_example" "$work/c/merged" |
  diff -u tests/install/expected/stream_example.txt - || fail "docs/stream_example.c printed something else"

# A parent meson project: dependency('sluice') through the pkg-config file.
mkdir "$work/parent"
cp "$work/c/example.c" "$work/parent/"
cat >"$work/parent/meson.build" <<'MESON'
project('parent', 'c')
executable('example', 'example.c', dependencies: dependency('sluice'))
MESON
(cd "$work/parent" && meson setup build >"$work/parent.log" 2>&1 && ninja -C build >>"$work/parent.log" 2>&1) ||
  { cat "$work/parent.log"; fail "a meson project could not use dependency('sluice')"; }
LD_LIBRARY_PATH="$stage$libdir" "$work/parent/build/example" tests/data/mosaic/mds/merged |
  diff -u tests/install/expected/merged.txt - || fail "the meson-built example differs"

# CMake: find_package(PkgConfig) and pkg_check_modules(sluice), as the
# README says, through the same staged pkg-config file.
mkdir "$work/cmake"
cp "$work/c/example.c" "$work/cmake/"
cat >"$work/cmake/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.16)
project(parent C)
find_package(PkgConfig REQUIRED)
pkg_check_modules(SLUICE REQUIRED IMPORTED_TARGET sluice)
if(NOT SLUICE_VERSION STREQUAL EXPECTED_VERSION)
  message(FATAL_ERROR "pkg_check_modules found sluice ${SLUICE_VERSION}, not ${EXPECTED_VERSION}")
endif()
add_executable(example example.c)
target_link_libraries(example PRIVATE PkgConfig::SLUICE)
CMAKE
(cd "$work/cmake" && cmake -G Ninja -S . -B build -DEXPECTED_VERSION="$version" >"$work/cmake.log" 2>&1 &&
  cmake --build build >>"$work/cmake.log" 2>&1) ||
  { cat "$work/cmake.log"; fail "a CMake project could not use pkg_check_modules(sluice)"; }
readelf -d "$work/cmake/build/example" | grep -q "Shared library: \[libsluice.so.$abi\]" ||
  fail "the CMake-built example does not need libsluice.so.$abi"
LD_LIBRARY_PATH="$stage$libdir" "$work/cmake/build/example" tests/data/mosaic/mds/csv_plain |
  diff -u tests/install/expected/csv_plain.txt - || fail "the CMake-built example differs"

# The installed CLI.
[ "$("$root/bin/sluice" verify tests/data/mosaic/mds/merged)" = \
  "ok: 106 samples in 6 shards, hashes and decoding verified" ] || fail "installed sluice verify"
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR

# ------------------------------------------------------- meson subproject
# A parent project with Sluice in subprojects/sluice (here a link to this
# tree) and the README's dependency() call, forced to the subproject even
# when an installed sluice.pc exists. Configuring it runs Sluice's
# meson.build as a subproject and resolves dependency('sluice') through its
# override; the example is compiled there with the subproject's include
# path. Building the subproject's libsluice would compile the whole engine a
# second time, so meson's own link command for the example, which must name
# the subproject's libsluice.so.N, is run with BUILD_DIR's library (the same
# sources) in its place.
mkdir -p "$work/sub/subprojects"
ln -s "$src" "$work/sub/subprojects/sluice"
cp "$work/c/example.c" "$work/sub/"
cat >"$work/sub/meson.build" <<'MESON'
project('parent', 'c')
sluice_dep = dependency('sluice', fallback: 'sluice', default_options: ['tests=false', 'bench=false'])
executable('example', 'example.c', dependencies: sluice_dep)
MESON
(cd "$work/sub" && meson setup --force-fallback-for=sluice build >"$work/sub.log" 2>&1) ||
  { cat "$work/sub.log"; fail "a meson project could not use Sluice as a subproject"; }
ninja -C "$work/sub/build" example.p/example.c.o >>"$work/sub.log" 2>&1 ||
  { cat "$work/sub.log"; fail "example.c does not compile against the subproject"; }
sub_lib="subprojects/sluice/bindings/c/libsluice.so.$abi"
link=$(ninja -C "$work/sub/build" -t commands example | tail -n 1)
[[ " $link " == *" $sub_lib "* ]] || fail "the subproject's example does not link $sub_lib: $link"
(cd "$work/sub/build" && eval "${link/" $sub_lib"/" $build/bindings/c/libsluice.so.$abi"}") ||
  fail "meson's link command for the subproject's example failed"
LD_LIBRARY_PATH="$build/bindings/c" "$work/sub/build/example" tests/data/mosaic/mds/quirk_oversized_samples |
  diff -u tests/install/expected/quirk_oversized_samples.txt - || fail "the subproject's example differs"

# ------------------------------------------------------------------- Python
reuse="$build-pip"
wheel_build="$reuse/wheel"
venv="$reuse/venv"
mkdir -p "$reuse"
# meson-python 0.12 reconfigures an existing build dir only when its native
# file (in the source tree, naming the venv's python) is unchanged, and then
# requires the dir to be configured: otherwise start the build over.
native="$src/.mesonpy-native-file.ini"
if [ ! -f "$wheel_build/meson-private/coredata.dat" ] ||
   ! grep -qxF "python = '$venv/bin/python3'" "$native" 2>/dev/null; then
  rm -rf "$wheel_build" "$native"
fi
rm -rf "$venv"
/usr/bin/python3 -m venv --system-site-packages "$venv"
"$venv/bin/pip" install --no-build-isolation --config-settings "builddir=$wheel_build" . \
  >"$work/pip.log" 2>&1 || { cat "$work/pip.log"; fail "pip install failed"; }
mkdir "$work/py"
cp tests/install/use_package.py "$work/py/"
# The modules the wheel must carry: every one of the package's source folder
# (so a module missing from bindings/python/meson.build fails here).
modules=$(cd bindings/python/sluice && ls -- *.py | sed 's/\.py$//' | paste -sd, -)
(cd "$work/py" && . "$venv/bin/activate" && python use_package.py "$version" "$modules") ||
  fail "the pip-installed package failed"
# The migration guide's example: code written for mosaicml-streaming, through
# the opt-in; expected/migration_example.txt is what Mosaic itself printed.
cp docs/migration_example.py "$work/py/"
(cd "$work/py" && . "$venv/bin/activate" && python migration_example.py) |
  diff -u tests/install/expected/migration_example.txt - ||
  fail "docs/migration_example.py printed something else"
echo "tests/install: ok (meson install: pkg-config, meson, subproject, CMake, README and docs examples; pip install + use + migration example)"
