#!/usr/bin/python3
"""Issue 38's reference readers beside bench/index/footer_parse_floor (arrow-rs):
DuckDB and pyarrow listing a folder of Parquet files and decoding every
file's footer, printing the files, row groups and rows (to check against
the engine's index) and the reader's own wall seconds (the import and the
venv's start are outside it; time the process too for them).

  bench/index/footer_parse_duckdb.py READER FOLDER [THREADS]

READER:
  duckdb-file    SELECT count(*), sum(num_row_groups), sum(num_rows)
                 FROM parquet_file_metadata('FOLDER/*.parquet'): a row a
                 file (each footer decoded whole, its fields summarised)
  duckdb-chunk   the same from parquet_metadata(): a row a column chunk
  pyarrow-count  pyarrow.dataset's count_rows(): the footers read and
                 decoded on Arrow's C++ thread pool, no Python a file; rows
                 only (row groups are not told apart)
  pyarrow-frags  each fragment's ensure_complete_metadata() from Python, a
                 file at a time: row groups and rows (Python's loop a file)
THREADS: DuckDB's `threads` setting or pyarrow's CPU pool (default: theirs).

Runs in a venv it makes on first use ($SLUICE_FOOTER_BENCH_VENV, default
build/footer-bench-venv) with the duckdb and pyarrow that
bench/python/parquet_bench_requirements.txt pins.
"""
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PINS = os.path.join(ROOT, 'bench', 'python', 'parquet_bench_requirements.txt')


def pins():
    """The duckdb and pyarrow lines of the Parquet bench's pins (their one owner)."""
    lines = [line.strip() for line in open(PINS)]
    return [line for line in lines if line.split('==')[0] in ('duckdb', 'pyarrow')]


def venv_python():
    venv = os.environ.get('SLUICE_FOOTER_BENCH_VENV') or os.path.join(
        ROOT, 'build', 'footer-bench-venv')
    python = os.path.join(venv, 'bin', 'python')
    want = '\n'.join(pins())
    stamp = os.path.join(venv, 'footer-bench-requirements')
    if not os.path.exists(python):
        subprocess.run(['/usr/bin/python3', '-m', 'venv', '--system-site-packages', venv],
                       check=True)
    if not os.path.exists(stamp) or open(stamp).read() != want:
        subprocess.run([python, '-m', 'pip', '-q', '--disable-pip-version-check', 'install',
                        *pins()], check=True)
        with open(stamp, 'w') as f:
            f.write(want)
    return python


def duckdb_counts(folder, threads, table):
    import duckdb
    con = duckdb.connect()
    if threads:
        con.execute(f'SET threads = {int(threads)}')
    glob = os.path.join(folder, '*.parquet').replace("'", "''")
    if table == 'file':
        sql = (f"SELECT count(*), sum(num_row_groups), sum(num_rows) "
               f"FROM parquet_file_metadata('{glob}')")
    else:  # a row a column chunk: rows counted at each group's first column
        sql = (f"SELECT count(DISTINCT file_name), count(*) FILTER (WHERE column_id = 0), "
               f"sum(row_group_num_rows) FILTER (WHERE column_id = 0) "
               f"FROM parquet_metadata('{glob}')")
    files, groups, rows = con.execute(sql).fetchone()
    return files, groups, rows


def pyarrow_counts(folder, threads, how):
    import pyarrow
    import pyarrow.dataset as ds
    if threads:
        pyarrow.set_cpu_count(int(threads))
        pyarrow.set_io_thread_count(int(threads))
    data = ds.dataset(folder, format='parquet')
    files = len(data.files)
    if how == 'count':
        return files, None, data.count_rows()
    groups = rows = 0
    for fragment in data.get_fragments():
        fragment.ensure_complete_metadata()
        groups += fragment.num_row_groups
        rows += fragment.metadata.num_rows
    return files, groups, rows


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    reader, folder = sys.argv[1], sys.argv[2]
    threads = sys.argv[3] if len(sys.argv) == 4 else None
    try:
        import duckdb  # noqa: F401
        import pyarrow  # noqa: F401
    except ImportError:
        python = venv_python()
        os.execv(python, [python, *sys.argv])
    start = time.perf_counter()
    if reader.startswith('duckdb-'):
        files, groups, rows = duckdb_counts(folder, threads, reader[len('duckdb-'):])
    elif reader.startswith('pyarrow-'):
        files, groups, rows = pyarrow_counts(folder, threads, reader[len('pyarrow-'):])
    else:
        sys.exit(f'READER {reader}: duckdb-file, duckdb-chunk, pyarrow-count or pyarrow-frags')
    whole = time.perf_counter() - start
    print(f'{reader} files {files} row_groups {groups} rows {rows} threads {threads or "default"} '
          f'whole_s {whole:.3f}')


if __name__ == '__main__':
    main()
