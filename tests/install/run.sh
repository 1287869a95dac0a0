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
# project with Sluice as a subproject builds the subproject's own library
# and runs the example against it. The C API guide's example
# (docs/stream_example.c) streams and resumes exactly as
# expected/stream_example.txt; its CMake lines are the ones CMake builds.
#
# Python: `pip wheel` (its file list checked) and `pip install
# --no-build-isolation .` into a fresh venv made with --system-site-packages
# (Debian's numpy, meson-python; no PyPI), then use_package.py and the
# migration guide's examples (docs/) with the venv activated, from a folder
# outside the tree.
# The two compiles this phase costs, the wheel's engine and the subproject's
# library, live in BUILD_DIR-wheel and BUILD_DIR-subproject and are reused by
# the next run. BUILD_DIR-wheel sits beside BUILD_DIR so that ccache (with
# CCACHE_BASEDIR at the source tree) serves the wheel every object that
# BUILD_DIR compiled with the same options, as CI's main tree does.
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
# Writes the `.. code-block:: LANG` blocks of an rst FILE to OUT.1, OUT.2, ...
# (their indentation removed), so that the docs' examples run from the docs
# themselves; prints how many there were.
rst_blocks() {  # rst_blocks FILE LANG OUT
  awk -v lang="$2" -v out="$3" '
    function indent(s) { match(s, /^ */); return RLENGTH }
    on && $0 !~ /^ *$/ && indent($0) <= at { on = 0 }
    on && !(body == 0 && $0 ~ /^ *(:[a-z-]+:.*)?$/) {
      if (cut < 0) cut = indent($0)
      print substr($0, cut + 1) >(out "." n); body = 1
    }
    $0 ~ "^ *\\.\\. code-block:: " lang "$" { at = indent($0); on = 1; n++; cut = -1; body = 0 }
    END { print n + 0 }' "$1"
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
for dataset in merged quirk_oversized_samples csv_plain json_plain all_encodings; do
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

# CMake: find_package(PkgConfig) and pkg_check_modules(sluice), the lines
# the C API guide (docs/c_api.rst) gives, through the same staged
# pkg-config file.
mkdir "$work/cmake"
cp "$work/c/example.c" "$work/cmake/"
[ "$(rst_blocks docs/c_api.rst cmake "$work/cmake/block")" = 1 ] || fail "not one cmake block in docs/c_api.rst"
{
  printf '%s\n' 'cmake_minimum_required(VERSION 3.16)' 'project(parent C)' 'add_executable(app example.c)'
  cat "$work/cmake/block.1"  # the C API guide's lines, linking `app`
  cat <<'CMAKE'
if(NOT SLUICE_VERSION STREQUAL EXPECTED_VERSION)
  message(FATAL_ERROR "pkg_check_modules found sluice ${SLUICE_VERSION}, not ${EXPECTED_VERSION}")
endif()
CMAKE
} >"$work/cmake/CMakeLists.txt"
(cd "$work/cmake" && cmake -G Ninja -S . -B build -DEXPECTED_VERSION="$version" >"$work/cmake.log" 2>&1 &&
  cmake --build build >>"$work/cmake.log" 2>&1) ||
  { cat "$work/cmake.log"; fail "a CMake project could not use pkg_check_modules(sluice)"; }
readelf -d "$work/cmake/build/app" | grep -q "Shared library: \[libsluice.so.$abi\]" ||
  fail "the CMake-built example does not need libsluice.so.$abi"
LD_LIBRARY_PATH="$stage$libdir" "$work/cmake/build/app" tests/data/mosaic/mds/csv_plain |
  diff -u tests/install/expected/csv_plain.txt - || fail "the CMake-built example differs"

# The installed CLI.
[ "$("$root/bin/sluice" verify tests/data/mosaic/mds/merged)" = \
  "ok: 106 samples in 6 shards, hashes and decoding verified" ] || fail "installed sluice verify"
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR

# ------------------------------------------------------- meson subproject
# A parent project with Sluice in subprojects/sluice (here a link to this
# tree) and the README's dependency() call, forced to the subproject even
# when an installed sluice.pc exists. Building its example builds the
# subproject's own libsluice.so.N and nothing else of Sluice (no CLI, tests
# or benchmarks), with no optimisation and no debug information
# (buildtype=plain), in unity units of eight sources as the sanitizer trees
# (./dev), the cheapest build that still compiles and links every source of
# the library; meson uses ccache when it is installed. The
# example then runs from the parent's build folder and must load that
# library. The parent lives in BUILD_DIR-subproject and is reused by the
# next run, as the wheel's build is.
sub="$build-subproject"
sub_start=$SECONDS
put() {  # put FILE: standard input into FILE, leaving an unchanged FILE alone
  cat >"$work/put"
  cmp -s "$work/put" "$1" || mv "$work/put" "$1"
}
mkdir -p "$sub/subprojects"
ln -sfn "$src" "$sub/subprojects/sluice"
put "$sub/example.c" <"$work/c/example.c"
put "$sub/meson.build" <<'MESON'
project('parent', 'c')
sluice_dep = dependency('sluice', fallback: 'sluice', default_options: ['tests=false', 'bench=false'])
executable('example', 'example.c', dependencies: sluice_dep)
MESON
sub_setup=(--force-fallback-for=sluice --buildtype=plain -Dunity=subprojects -Dunity_size=8)
if [ ! -f "$sub/build/build.ninja" ] || [ "$(cat "$sub/setup" 2>/dev/null)" != "${sub_setup[*]}" ]; then
  rm -rf "$sub/build"
  (cd "$sub" && meson setup "${sub_setup[@]}" build >"$work/sub.log" 2>&1) ||
    { cat "$work/sub.log"; fail "a meson project could not use Sluice as a subproject"; }
  echo "${sub_setup[*]}" >"$sub/setup"
fi
ninja -C "$sub/build" example >>"$work/sub.log" 2>&1 ||
  { cat "$work/sub.log"; fail "the subproject's libsluice or the example linked to it did not build"; }
sub_lib="$sub/build/subprojects/sluice/bindings/c/libsluice.so.$abi"
readelf -d "$sub_lib" | grep -q "Library soname: \[libsluice.so.$abi\]" ||
  fail "the subproject's library has not the soname libsluice.so.$abi"
[ ! -e "$sub/build/subprojects/sluice/bindings/cli/sluice" ] ||
  fail "building the example built the subproject's sluice command too"
# Run as built, nothing exported: meson's rpath must lead to the subproject's library.
loaded=$(LD_TRACE_LOADED_OBJECTS=1 "$sub/build/example" | sed -n "s/^\s*libsluice\.so\.$abi => \(\S*\) .*/\1/p")
[ "$(realpath "$loaded")" = "$(realpath "$sub_lib")" ] ||
  fail "the subproject's example loads '$loaded', not $sub_lib"
"$sub/build/example" tests/data/mosaic/mds/quirk_oversized_samples |
  diff -u tests/install/expected/quirk_oversized_samples.txt - || fail "the subproject's example differs"
echo "tests/install: meson subproject built and used in $((SECONDS - sub_start)) s" >&2

# ------------------------------------------------------------------- Python
reuse="$build-pip"
wheel_build="$build-wheel"
venv="$reuse/venv"
# The README gives both forms, the plain one and the offline one run here.
for line in '    pip install .' '    python3 -m venv --system-site-packages ENV' \
            '    ENV/bin/pip install --no-build-isolation .'; do
  grep -qxF -- "$line" README.md || fail "README.md does not say: $line"
done
# `pip wheel .` first (bindings/python/wheel.sh; its file list is checked
# below), then `pip install .` into the same venv, which reuses the same
# meson build: nothing is compiled twice. The wheel stays in BUILD_DIR-pip
# for the wheel stage, which repairs it into a manylinux wheel
# (tests/install/wheel.sh), and for the engines stage, which installs that
# one (or this one when the wheel stage did not run) where pyspark and the
# trainers run (tests/engines/run.sh, SLUICE_ENGINES_WHEEL).
wheel=$(bindings/python/wheel.sh build "$build" "$reuse") || fail "pip wheel failed"
"$venv/bin/pip" install --no-build-isolation --config-settings "builddir=$wheel_build" . \
  >"$work/pip.log" 2>&1 || { cat "$work/pip.log"; fail "pip install failed"; }
mkdir "$work/py"
cp tests/install/use_package.py "$work/py/"
# The modules the wheel must carry: every one of the package's source folder
# (so a module missing from bindings/python/meson.build fails here).
modules=$(cd bindings/python/sluice && ls -- *.py | sed 's/\.py$//' | paste -sd, -)
(cd "$work/py" && . "$venv/bin/activate" && python use_package.py "$version" "$modules" "$wheel") ||
  fail "the pip-installed package failed"
# SLUICE_LIBRARY still overrides the package's own library.
override=$(cd "$work/py" && . "$venv/bin/activate" &&
  SLUICE_LIBRARY="$build/bindings/c/libsluice.so" python -c 'import sluice; print(sluice._lib.lib._name)')
[ "$override" = "$build/bindings/c/libsluice.so" ] || fail "SLUICE_LIBRARY did not override: $override"
# The migration guide's first two python blocks ("What to change"), in the
# venv: the import change (its "before" line is Mosaic's import, so it runs
# after the opt-in here) and the opt-in itself. Later blocks set other
# systems' code beside Sluice's (Databricks volumes, Hugging Face) and are
# not run here.
[ "$(rst_blocks docs/migration.rst python "$work/py/block")" -ge 2 ] ||
  fail "fewer than two python blocks in docs/migration.rst"
grep -q 'import sluice.streaming_alias' "$work/py/block.2" ||
  fail "docs/migration.rst's second python block is not the streaming_alias opt-in"
(cd "$work/py" && . "$venv/bin/activate" &&
  python -c 'import sluice.streaming_alias; exec(open("block.1").read())' &&
  python -c 'exec(open("block.2").read())
import streaming, sluice
assert streaming.StreamingDataset is sluice.StreamingDataset') ||
  fail "docs/migration.rst: a python block failed"
# The migration guide's example: code written for mosaicml-streaming, through
# the opt-in; expected/migration_example.txt is what Mosaic itself printed,
# but for the sluice_order record Sluice's state adds after Mosaic's keys.
cp docs/migration_example.py "$work/py/"
(cd "$work/py" && . "$venv/bin/activate" && python migration_example.py) |
  diff -u tests/install/expected/migration_example.txt - ||
  fail "docs/migration_example.py printed something else"
echo "tests/install: ok (meson install: pkg-config, meson, subproject, CMake, README and docs examples; pip wheel + install + use + migration guide's examples)"
