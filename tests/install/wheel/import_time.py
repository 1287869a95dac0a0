"""`import sluice` timed cold and warm (tests/install/bare_root.sh; it prints
figures and asserts none). Run by the host's python3 inside the bare root's
mount namespace:
    import_time.py RUNS EVICT_DIR [EVICT_DIR ...] -- PYTHON [ARGS ...]
PYTHON ARGS -X importtime -c 'import sluice' is run RUNS times cold, then
once to warm up and RUNS times warm. Cold means that every file under the
EVICT_DIRs (the root's /usr and the venv) was first dropped from the page
cache with POSIX_FADV_DONTNEED, file by file: the machine's other processes
keep their cache, as dropping all caches would not let them. The medians
given are of `-X importtime`'s cumulative time of `import sluice` and of
the whole process's wall time (the interpreter's start included)."""
import os
import statistics
import subprocess
import sys
import time


def evict(folders):
    """Drops the files' pages, none of them mapped by this process (the
    host's python runs this, not the root's). main() wrote them back first:
    DONTNEED keeps dirty pages, and a fresh venv's are dirty."""
    for folder in folders:
        for parent, _, files in os.walk(folder):
            for name in files:
                path = os.path.join(parent, name)
                if os.path.islink(path) or not os.path.isfile(path):
                    continue
                fd = os.open(path, os.O_RDONLY)
                try:
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                finally:
                    os.close(fd)


def once(command):
    start = time.perf_counter()
    run = subprocess.run(command + ['-X', 'importtime', '-c', 'import sluice'],
                         capture_output=True, text=True)
    wall = time.perf_counter() - start
    if run.returncode != 0:
        sys.exit(f'import_time.py: import sluice failed: {run.stderr[-2000:]}')
    # The last line is the top-level import's: "import time: self | cumulative | sluice".
    last = run.stderr.strip().splitlines()[-1].split('|')
    if last[-1].strip() != 'sluice':
        sys.exit(f'import_time.py: unexpected -X importtime output: {run.stderr[-500:]}')
    return int(last[1]) / 1000, wall * 1000


def report(name, samples):
    imports = [i for i, _ in samples]
    walls = [w for _, w in samples]
    print(f'import sluice, {name}, median of {len(samples)}: '
          f'{statistics.median(imports):.0f} ms (-X importtime cumulative; '
          f'runs {", ".join(f"{i:.0f}" for i in imports)}), '
          f'{statistics.median(walls):.0f} ms process wall time')


def main():
    runs = int(sys.argv[1])
    split = sys.argv.index('--')
    folders, command = sys.argv[2:split], sys.argv[split + 1:]
    # Written back once here: an fdatasync per file costs a device flush each.
    os.sync()
    cold = []
    for _ in range(runs):
        evict(folders)
        cold.append(once(command))
    once(command)
    warm = [once(command) for _ in range(runs)]
    report('cold', cold)
    report('warm', warm)


if __name__ == '__main__':
    main()
