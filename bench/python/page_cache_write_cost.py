"""What writing a cold epoch's cache costs on this machine, without Sluice:
the same bytes written into a fresh file of FOLDER through the page cache
(2 MiB writes, the engine's body buffers' size) right after the previous
file of that size was deleted, and again after a pause, alternated; then
with O_DIRECT at 1, 2, 4 and 8 writes in flight (one thread each, every
thread reusing one buffer, so the writes touch no fresh memory).

    /usr/bin/python3 bench/python/page_cache_write_cost.py FOLDER [--gb 2] [--rounds 3] [--pause 3]

Prints each write's wall seconds, the process's system CPU seconds, and
the MiB the guest reported free to its host meanwhile (virtio-balloon free
page reporting: /sys/module/page_reporting/parameters/reported_kib, where
the kernel has it). On a VM that reports freed memory to its host, a
buffered write into pages freed more than the reporting delay (2 s) ago
costs the host's fault on each page's first touch, which the guest counts
as the writer's system time: the cost that varies run to run in a cached
cold epoch (cold_epoch.py --sched, and `perf record` of the write pool's
copy_folio_from_iter_atomic). A file system refusing O_DIRECT skips its rows.
"""
import argparse
import mmap
import os
import resource
import threading
import time

BLOCK = 2 << 20
REPORTED = '/sys/module/page_reporting/parameters/reported_kib'


def reported_mib():
    """MiB the guest has reported free to its host so far (0 where not told)."""
    try:
        with open(REPORTED) as f:
            return int(f.read()) >> 10
    except (OSError, ValueError):
        return 0


def system_seconds():
    return resource.getrusage(resource.RUSAGE_SELF).ru_stime


def timed(write):
    """(wall s, system CPU s, MiB reported to the host) of write()."""
    r0, s0, t0 = reported_mib(), system_seconds(), time.perf_counter()
    write()
    return time.perf_counter() - t0, system_seconds() - s0, reported_mib() - r0


def write_file(path, total, flags=0, in_flight=1):
    """`total` bytes (a multiple of BLOCK) of 0x5a into a new file at `path`
    in BLOCK writes, `in_flight` threads each writing its own run of blocks
    from one page-aligned buffer."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | flags, 0o600)
    try:
        blocks = total // BLOCK
        errors = []

        def run(i):
            try:
                buf = mmap.mmap(-1, BLOCK)  # page-aligned, as O_DIRECT asks
                buf.write(b'\x5a' * BLOCK)
                for block in range(i * blocks // in_flight, (i + 1) * blocks // in_flight):
                    os.pwrite(fd, buf, block * BLOCK)
            except OSError as e:
                errors.append(e)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(in_flight)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
    finally:
        os.close(fd)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('folder')
    ap.add_argument('--gb', type=float, default=2.0, help='GB a write (default 2: an epoch of B)')
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--pause', type=float, default=3.0,
                    help='seconds between deleting a file and the next write (default 3)')
    args = ap.parse_args()
    total = int(args.gb * 1e9) // BLOCK * BLOCK
    path = os.path.join(args.folder, 'page_cache_write_cost.bin')
    print(f'{total / 1e9:.2f} GB a write, {BLOCK >> 20} MiB writes; load {os.getloadavg()[0]:.1f}')
    try:
        # The first write only frees its pages for the next one.
        write_file(path, total)
        os.remove(path)
        for r in range(args.rounds):
            for pause in (0.0, args.pause):
                time.sleep(pause)
                wall, sys_s, rep = timed(lambda: write_file(path, total))
                os.remove(path)
                print(f'  buffered, {pause:.0f} s after the last delete: {wall:6.2f} s, '
                      f'system {sys_s:.2f} s, {rep} MiB reported to the host', flush=True)
        for in_flight in (1, 2, 4, 8):
            try:
                wall, sys_s, _ = timed(lambda: write_file(path, total, os.O_DIRECT, in_flight))
            except OSError as e:
                print(f'  O_DIRECT refused here: {e}')
                break
            finally:
                if os.path.exists(path):
                    os.remove(path)
            print(f'  O_DIRECT, {in_flight} in flight: {wall:6.2f} s ({total / wall / 1e9:.2f} GB/s), '
                  f'system {sys_s:.2f} s', flush=True)
    finally:
        if os.path.exists(path):
            os.remove(path)
    print(f'load {os.getloadavg()[0]:.1f}')


if __name__ == '__main__':
    main()
