#!/usr/bin/env bash
# The manylinux wheel where users train: a machine with none of the -dev
# packages and no compiler (`./dev bare-root`, run by hand and by root: the
# Debian root weighs 275 MB and takes minutes to make, so CI's wheel stage
# checks the same property with auditwheel and wheel/needed.py instead).
#   tests/install/bare_root.sh BUILD_DIR WHEEL
# A minimal Debian 12 (debootstrap --variant=minbase with python3 and
# python3-venv, nothing else) in BUILD_DIR-bare/root, made once and kept; it
# is checked to hold no -dev package, no C or C++ compiler and no header
# in /usr/include. WHEEL and its pinned dependencies (wheel/requirements.txt,
# downloaded by the host into a wheelhouse through pip's cache) are installed
# into a venv inside the root, and wheel/test_wheel.py runs there under
# chroot, in a mount namespace of its own with /proc and /dev: it imports
# the package, writes, verifies and streams datasets locally and through
# s3rver, which runs on the host at 127.0.0.1 (the root has no node).
# Last, the import time inside the root (median of 11 `-X importtime` runs).
set -euo pipefail
cd "$(dirname "$0")/../.."
src=$PWD
fail() { echo "tests/install/bare_root.sh: $*" >&2; exit 1; }
[ $# = 2 ] || fail "usage: tests/install/bare_root.sh BUILD_DIR WHEEL"
[ "$(id -u)" = 0 ] || fail "chroot and mount need root"
build=$(realpath -m "$1")
wheel=$(realpath "$2")
version=$(basename "$wheel" | cut -d- -f2)
root="$build-bare/root"
if [ ! -x "$root/usr/bin/python3" ]; then
  rm -rf "$root.tmp"
  mkdir -p "$build-bare"
  debootstrap --variant=minbase --include=python3,python3-venv bookworm "$root.tmp" \
    http://deb.debian.org/debian >"$build-bare/debootstrap.log" 2>&1 ||
    { tail -20 "$build-bare/debootstrap.log"; fail "debootstrap failed"; }
  mv "$root.tmp" "$root"
fi
# Nothing to build with: no -dev package, no compiler, no headers.
dev=$(chroot "$root" dpkg-query -W -f='${binary:Package}\n' | grep -E -- '-dev(:|$)' || true)
[ -z "$dev" ] || fail "the root holds -dev packages: $dev"
for tool in cc gcc c++ g++ clang ld; do
  [ ! -e "$root/usr/bin/$tool" ] || fail "the root holds /usr/bin/$tool"
done
[ -z "$(find "$root/usr/include" -type f)" ] || fail "the root holds headers in /usr/include"

run="$root/run/sluice-bare"
rm -rf "$run"
mkdir -p "$run/wheels" "$run/fixtures" "$run/test"
# The root's python3 is Debian 12's 3.11, as the host's: the host's pip
# fetches the same wheels the root would.
[ -x "$build-bare/host-venv/bin/pip" ] || /usr/bin/python3 -m venv "$build-bare/host-venv"
"$build-bare/host-venv/bin/pip" download -q --disable-pip-version-check --only-binary=:all: -d "$run/wheels" \
  -r tests/install/wheel/requirements.txt >"$run/download.log" 2>&1 ||
  { cat "$run/download.log"; fail "pip download of the requirements"; }
cp "$wheel" "$run/wheels/"
cp tests/bindings/python/s3rver_fixture.py "$run/fixtures/"
cp tests/install/wheel/test_wheel.py "$run/test/"

# s3rver on the host, with the fixture's key pair and bucket.
port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
read -r key secret < <(cd tests/bindings/python && /usr/bin/python3 -c 'import s3rver_fixture as f; print(f.KEY_ID, f.SECRET)')
mkdir -p "$run/s3rver"
node tests/servers/s3rver_launch.js "$port" "$run/s3rver/data" "$key" "$secret" bkt \
  >"$run/s3rver/log.txt" 2>&1 &
s3rver_pid=$!
trap 'kill "$s3rver_pid" 2>/dev/null || true' EXIT
for _ in $(seq 200); do
  grep -q "listening" "$run/s3rver/log.txt" 2>/dev/null && break
  kill -0 "$s3rver_pid" 2>/dev/null || { cat "$run/s3rver/log.txt"; fail "s3rver exited"; }
  sleep 0.1
done

# Inside the root: a venv that sees no system package, the wheel from the
# wheelhouse alone, the test run from its own folder with nothing inherited.
inside=$(cat <<INSIDE
set -eu
rm -rf /run/sluice-bare/env
python3 -m venv /run/sluice-bare/env
/run/sluice-bare/env/bin/pip -q --disable-pip-version-check install --no-index \
  --find-links /run/sluice-bare/wheels -c /run/sluice-bare/requirements.txt \
  /run/sluice-bare/wheels/$(basename "$wheel") pytest
cd /run/sluice-bare/test
SLUICE_TEST_FIXTURES=/run/sluice-bare/fixtures SLUICE_WHEEL_VERSION=$version \
  SLUICE_TEST_S3RVER=http://127.0.0.1:$port \
  /run/sluice-bare/env/bin/python -m pytest -q -p no:cacheprovider -rs test_wheel.py >pytest.txt 2>&1 ||
  { cat pytest.txt; exit 1; }
cat pytest.txt
# A skipped test (no s3rver) proves nothing.
! grep -q skipped pytest.txt
for i in \$(seq 11); do
  /run/sluice-bare/env/bin/python -X importtime -c 'import sluice' 2>&1 | tail -1 | cut -d'|' -f2
done | sort -n | sed -n 6p | sed 's/^ */import sluice, median of 11 (-X importtime, us): /'
INSIDE
)
cp tests/install/wheel/requirements.txt "$run/requirements.txt"
unshare -m sh -c 'mount -t proc proc "$1/proc" && mount --rbind /dev "$1/dev" &&
  exec chroot "$1" env -i PATH=/usr/bin:/bin HOME=/root LANG=C.UTF-8 sh -c "$2"' \
  sh "$root" "$inside" || fail "the wheel failed in the bare root"
echo "tests/install/bare_root.sh: ok: $(basename "$wheel") installed, imported, wrote and streamed (local and s3) in a Debian 12 root without -dev packages or compiler"
