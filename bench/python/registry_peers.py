"""mosaicml-streaming and LitData from the package registry at the pins of
peers.txt, for the benchmarks that compare Sluice with them (speed_table.py,
resume_bench.py, image_bench.py). They go into a venv made (or reused) here
with Debian's python3 packages visible; the benchmarks' children run Debian's
python with the venv's site-packages first on sys.path, as they did with a
source checkout, so the same folder argument serves a checkout or the venv.
pip's downloads are kept in $PIP_CACHE_DIR (default build/pip-cache, shared
with tests/engines/run.sh).
"""
import glob
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PINS = os.path.join(HERE, 'peers.txt')


def pin_files(path=PINS):
    """peers.txt and the files it includes (`-r`, relative to it), in order."""
    files = [path]
    for line in open(path):
        line = line.split('#')[0].strip()
        if line.startswith('-r '):
            files += pin_files(os.path.join(os.path.dirname(path), line[3:].strip()))
    return files


def pins():
    """{name: version} from peers.txt and what it includes."""
    out = {}
    for path in pin_files():
        for line in open(path):
            line = line.split('#')[0].strip()
            if line and not line.startswith('-'):
                name, version = line.split('==')
                out[name] = version
    return out


def site_packages():
    """The venv's site-packages holding the pinned peers, installed when the
    venv is missing or peers.txt changed since it was filled."""
    venv = os.environ.get('SLUICE_BENCH_PEERS_VENV') or os.path.join(ROOT, 'build',
                                                                     'bench-peers-venv')
    python = os.path.join(venv, 'bin', 'python')
    stamp = os.path.join(venv, 'bench-peers')
    want = ''.join(open(p).read() for p in pin_files())
    if not os.path.exists(python):
        subprocess.run(['/usr/bin/python3', '-m', 'venv', '--system-site-packages', venv],
                       check=True)
    if not os.path.exists(stamp) or open(stamp).read() != want:
        env = dict(os.environ)
        env.setdefault('PIP_CACHE_DIR', os.path.join(ROOT, 'build', 'pip-cache'))
        subprocess.run([python, '-m', 'pip', '-q', '--disable-pip-version-check', 'install',
                        '--no-deps', '-r', PINS], check=True, env=env)
        with open(stamp, 'w') as f:
            f.write(want)
    found = glob.glob(os.path.join(venv, 'lib', 'python3*', 'site-packages'))
    if len(found) != 1:
        raise RuntimeError(f'{venv}: expected one lib/python3*/site-packages, found {found}')
    return found[0]


def add_arguments(ap):
    """The peers' options of the benchmarks that run Mosaic and LitData."""
    ap.add_argument('--mosaic-src', help='a mosaicml/streaming checkout instead of the '
                    'registry\'s release (peers.txt)')
    ap.add_argument('--litdata-src', help='a Lightning-AI/litData checkout instead of the '
                    'registry\'s release (peers.txt)')
    ap.add_argument('--no-registry', action='store_true',
                    help='leave out the peers not given as checkouts (no venv, no network)')


def resolve(args):
    """Sets args.mosaic_src and args.litdata_src to the folder each peer is
    imported from (its checkout, else the venv's site-packages; None: left
    out), and prints them."""
    registry = None if args.no_registry else site_packages()
    for attr, name in (('mosaic_src', 'mosaicml-streaming'), ('litdata_src', 'LitData')):
        given = getattr(args, attr)
        if given and not os.path.isdir(given):
            raise SystemExit(f'--{attr.replace("_", "-")} {given}: not a folder')
        setattr(args, attr, given or registry)
        print(f'{name}: {getattr(args, attr) or "left out (--no-registry)"}')
