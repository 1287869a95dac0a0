"""The CPU of one pass of parquet_stream_bench.py's --child beside its rows/s:
the child's own (the DataLoader's main process, its imports included) and
its DataLoader workers' (reaped when the pass ends), each user + system:
where a DataLoader pass spends more than one process does.

usage: parquet_loader_cpu.py LIB URL CACHE WORKERS ENDPOINT
  (the --child arguments: LIB sluice or sluice-mds, CACHE '' to read URL in
  place, WORKERS 0 for one process; shuffle off, no row limit)
Prints {"lib", "workers", "rows_s", "seconds", "cpu_user", "cpu_sys",
"main_cpu", "workers_cpu"}: cpu_user and cpu_sys are the child's and its
workers' together (getrusage(RUSAGE_CHILDREN) here), main_cpu and
workers_cpu their split (user + sys seconds each, as the child counts them).
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
    cpu = got['cpu']
    print(json.dumps({'lib': lib, 'workers': int(workers),
                      'rows_s': round(got['rows'] / got['seconds']),
                      'seconds': round(got['seconds'], 3), 'cpu_user': round(ru.ru_utime, 2),
                      'cpu_sys': round(ru.ru_stime, 2),
                      'main_cpu': round(cpu['main_user'] + cpu['main_sys'], 2),
                      'workers_cpu': round(cpu['workers_user'] + cpu['workers_sys'], 2)}))


if __name__ == '__main__':
    main()
