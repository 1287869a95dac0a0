#!/usr/bin/env bash
# The manylinux wheel where users train: a machine with none of the -dev
# packages and no compiler (`./dev test`'s "bare-root" stage: CI, or
# SLUICE_BARE_ROOT=1 with SLUICE_WHEEL=1; and `./dev bare-root`). As root.
#   tests/install/bare_root.sh BUILD_DIR WHEEL ROOTS_DIR
# A minimal Debian 12 (debootstrap --variant=minbase with python3 and
# python3-venv, nothing else) is made once in ROOTS_DIR/root-KEY, KEY a hash
# of the debootstrap command's package list, suite and mirror, and kept
# there: CI passes a folder outside its clone, as it does for pip's cache, so
# a later run on the same machine skips debootstrap; roots of other keys are
# removed. The root is checked to hold no -dev package, no C or C++
# compiler and no header in /usr/include, and is used read-only: the run's
# files live in BUILD_DIR-bare/run, mounted at /mnt. WHEEL and its pinned
# dependencies (wheel/requirements.txt, downloaded by the host into a
# wheelhouse through pip's cache) are installed into a fresh venv inside the
# root, and wheel/test_wheel.py runs there under chroot, in a mount
# namespace of its own with /proc, /dev and a tmpfs /tmp: it imports the
# package, writes, verifies and streams datasets locally and through
# s3rver, which runs on the host at 127.0.0.1 (the root shares the host's
# network but has no node). Last, the wheel's size and the import time
# inside the root, cold and warm (wheel/import_time.py).
set -euo pipefail
cd "$(dirname "$0")/../.."
fail() { echo "tests/install/bare_root.sh: $*" >&2; exit 1; }
# Each step's time since the start, in and out of the root.
t0=$(date +%s)
say() { echo "tests/install/bare_root.sh: $* ($(($(date +%s) - t0)) s)" >&2; }
[ $# = 3 ] || fail "usage: tests/install/bare_root.sh BUILD_DIR WHEEL ROOTS_DIR"
[ "$(id -u)" = 0 ] || fail "debootstrap, chroot and mount need root"
build=$(realpath -m "$1")
wheel=$(realpath "$2")
roots=$(realpath -m "$3")
version=$(basename "$wheel" | cut -d- -f2)

suite=bookworm
mirror=http://deb.debian.org/debian
include=python3,python3-venv
key=$(printf '%s\n' minbase "$suite" "$mirror" "$include" | sha256sum | cut -c1-16)
root="$roots/root-$key"
mkdir -p "$roots"
# One run at a time uses the roots (two CI clones may run at once): the lock
# is held until this script ends, so no run removes a root another one uses.
exec 9>"$roots/lock"
flock 9
if [ ! -f "$root/.sluice-bare-root" ]; then
  made=$SECONDS
  rm -rf "$root" "$roots/making"
  debootstrap --variant=minbase --include="$include" "$suite" "$roots/making" "$mirror" \
    >"$roots/debootstrap.log" 2>&1 ||
    { tail -20 "$roots/debootstrap.log"; fail "debootstrap failed"; }
  # The stamp is written last: a root without it is an unfinished one.
  echo "$key" >"$roots/making/.sluice-bare-root"
  mv -T "$roots/making" "$root"
  echo "tests/install/bare_root.sh: made the root $root in $((SECONDS - made)) s ($(du -sm "$root" | cut -f1) MB)" >&2
else
  echo "tests/install/bare_root.sh: the root $root is kept from an earlier run" >&2
fi
for old in "$roots"/root-*; do
  [ "$old" = "$root" ] || rm -rf "$old"
done
# Nothing to build with: no -dev package, no compiler, no headers.
dev=$(chroot "$root" dpkg-query -W -f='${binary:Package}\n' | grep -E -- '-dev(:|$)' || true)
[ -z "$dev" ] || fail "the root holds -dev packages: $dev"
for tool in cc gcc c++ g++ clang ld; do
  [ ! -e "$root/usr/bin/$tool" ] || fail "the root holds /usr/bin/$tool"
done
[ -z "$(find "$root/usr/include" -type f)" ] || fail "the root holds headers in /usr/include"
say "checked the root"

run="$build-bare/run"
rm -rf "$run"
mkdir -p "$run/wheels" "$run/fixtures" "$run/test" "$run/home"
# The root's python3 is Debian 12's 3.11, as the host's: the host's pip
# fetches the same wheels the root would.
[ -x "$build-bare/host-venv/bin/pip" ] || /usr/bin/python3 -m venv "$build-bare/host-venv"
"$build-bare/host-venv/bin/pip" download -q --disable-pip-version-check --only-binary=:all: -d "$run/wheels" \
  -r tests/install/wheel/requirements.txt >"$run/download.log" 2>&1 ||
  { cat "$run/download.log"; fail "pip download of the requirements"; }
cp "$wheel" "$run/wheels/"
cp tests/install/wheel/requirements.txt "$run/"
cp tests/bindings/python/s3rver_fixture.py "$run/fixtures/"
cp tests/install/wheel/test_wheel.py "$run/test/"
say "downloaded the wheelhouse"

# s3rver on the host, with the fixture's key pair and bucket.
port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
read -r key_id secret < <(cd tests/bindings/python && /usr/bin/python3 -c 'import s3rver_fixture as f; print(f.KEY_ID, f.SECRET)')
mkdir -p "$build-bare/s3rver"
rm -rf "$build-bare/s3rver/data"
node tests/servers/s3rver_launch.js "$port" "$build-bare/s3rver/data" "$key_id" "$secret" bkt \
  >"$build-bare/s3rver/log.txt" 2>&1 &
s3rver_pid=$!
trap 'kill "$s3rver_pid" 2>/dev/null || true' EXIT
for _ in $(seq 200); do
  grep -q "listening" "$build-bare/s3rver/log.txt" 2>/dev/null && break
  kill -0 "$s3rver_pid" 2>/dev/null || { cat "$build-bare/s3rver/log.txt"; fail "s3rver exited"; }
  sleep 0.1
done
say "started s3rver"

# Inside the root: a venv that sees no system package, the wheel from the
# wheelhouse alone, the test run from its own folder with nothing inherited.
inside=$(cat <<INSIDE
set -eu
say() { echo "tests/install/bare_root.sh: \$* (\$((\$(date +%s) - $t0)) s)" >&2; }
python3 -m venv /mnt/env
say made the venv
/mnt/env/bin/pip -q --disable-pip-version-check --no-cache-dir install --no-index \
  --find-links /mnt/wheels -c /mnt/requirements.txt /mnt/wheels/$(basename "$wheel") pytest
say installed the wheel
cd /mnt/test
SLUICE_TEST_FIXTURES=/mnt/fixtures SLUICE_WHEEL_VERSION=$version \
  SLUICE_TEST_S3RVER=http://127.0.0.1:$port \
  /mnt/env/bin/python -m pytest -q -p no:cacheprovider -rs test_wheel.py >pytest.txt 2>&1 ||
  { cat pytest.txt; exit 1; }
cat pytest.txt
# A skipped test (no s3rver) proves nothing.
! grep -q skipped pytest.txt
INSIDE
)
chrooted="chroot $root env -i PATH=/usr/bin:/bin HOME=/mnt/home LANG=C.UTF-8"
# The root read-only (a later run finds it as debootstrap left it), the
# run's folder at /mnt; then the test, then the import times.
# shellcheck disable=SC2016  # expanded by the inner sh
unshare -m sh -c 'set -e
  mount --bind "$1" "$1" && mount -o remount,bind,ro "$1"
  mount -t proc proc "$1/proc" && mount --rbind /dev "$1/dev" && mount -t tmpfs tmpfs "$1/tmp"
  mount --bind "$2" "$1/mnt"
  $3 sh -c "$4"
  echo "tests/install/bare_root.sh: the test passed ($(($(date +%s) - $5)) s)" >&2
  /usr/bin/python3 tests/install/wheel/import_time.py 5 "$1/usr" "$2/env" -- $3 /mnt/env/bin/python' \
  sh "$root" "$run" "$chrooted" "$inside" "$t0" || fail "the wheel failed in the bare root"
echo "tests/install/bare_root.sh: wheel $(basename "$wheel"): $(stat -c %s "$wheel") bytes"
# The run's venv and wheelhouse (160 MB) are kept only when it fails.
rm -rf "$run" "$build-bare/s3rver/data"
echo "tests/install/bare_root.sh: ok: installed, imported, wrote and streamed (local and s3) in a Debian 12 root without -dev packages or compiler, in $(($(date +%s) - t0)) s"
