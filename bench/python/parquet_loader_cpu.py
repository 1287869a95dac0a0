"""The CPU of one pass of parquet_stream_bench.py's --child (its own and
its DataLoader workers', reaped: getrusage(RUSAGE_CHILDREN)), beside its
rows/s: where a DataLoader pass spends more than one process does.

usage: parquet_loader_cpu.py LIB URL CACHE WORKERS ENDPOINT
  (the --child arguments: LIB sluice or sluice-mds, CACHE '' to read URL in
  place, WORKERS 0 for one process; shuffle off, no row limit)
Prints {"lib", "workers", "rows_s", "seconds", "cpu_user", "cpu_sys"}.
"""
import json
import os
import resource
import subprocess
import sys

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'parquet_stream_bench.py')


def main():
    lib, url, cache, workers, endpoint = sys.argv[1:6]
    out = subprocess.run([sys.executable, BENCH, '--child', lib, url, cache, '0', workers,
                          endpoint, '0'], capture_output=True, text=True, check=True)
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    print(json.dumps({'lib': lib, 'workers': int(workers),
                      'rows_s': round(got['rows'] / got['seconds']),
                      'seconds': round(got['seconds'], 3), 'cpu_user': round(ru.ru_utime, 2),
                      'cpu_sys': round(ru.ru_stime, 2)}))


if __name__ == '__main__':
    main()
