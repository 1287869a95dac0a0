"""Issue 35's peer benchmark: the same Parquet files streamed row by row by
Sluice (`sluice.StreamingDataset` over the folder, each row group a shard),
pyarrow (`ParquetFile.iter_batches` file after file, `to_pylist`; its own
S3 filesystem for s3://), DuckDB (`SELECT * FROM read_parquet(...)`,
`fetchmany`; local files only), LitData's Parquet streaming
(`index_parquet_dataset` + `ParquetLoader`) and Hugging Face `datasets`
streaming (`load_dataset("parquet", ..., streaming=True)`, s3fs for s3://),
and Sluice over the same rows written as MDS (`sluice-mds`, shards of about
a row group's size), from a loopback s3rver (directly, or behind
delay_proxy.py: 15 ms to first byte, 100 MB/s a connection) and from a
local folder, in one run on one machine: rows/s, MB/s and time to first
row, and Sluice's resume time, medians of --runs, each measurement a fresh
process, the libraries interleaved.

    SLUICE_LIBRARY=build/bindings/c/libsluice.so.4 PYTHONPATH=bindings/python \\
        /usr/bin/python3 bench/python/parquet_stream_bench.py --work /tmp/pq-bench \\
        [--runs 3] [--scale 1] [--tables text,bin1k,bin256k] [--shuffle no|yes|both] \\
        [--loader | --loader-only] [--libs sluice,sluice-mds,pyarrow,duckdb,litdata,hf]
        [--sources "s3 cold,s3 warm,proxy cold,proxy warm,local"] [--peer-rows N]
        [--no-resume]

The peers come pinned (parquet_bench_requirements.txt, constraints in
parquet_bench_constraints.txt) in a venv this script makes on first use
($SLUICE_PARQUET_BENCH_VENV, default build/parquet-bench-venv) with Debian's
python3 packages visible; pip needs the registry that once. s3rver from
tests/servers (./dev deps installs its node_modules).

Tables (written once under --work, kept between invocations), 8 files of 4
row groups each (times --scale rows):
  text     200,000 rows: `text` (a string of ~40 words) and `input_ids`
           (a list of 32-192 int32 token ids), snappy
  bin1k    200,000 rows: `id` int64 and `data`, 1 KiB of random bytes, uncompressed
  bin256k    2,000 rows: `id` int64 and `data`, 256 KiB of random bytes, uncompressed
MB/s: the table's Parquet bytes (10^6) over the same seconds as rows/s, for
every library (sluice-mds too), so the columns compare as rows/s do.
Resume (Sluice, Parquet and MDS, s3 warm, shuffle as the row): a process
reads half the epoch and saves state_dict; a new one opens the dataset,
load_state_dict()s it and reads the rest: resume is construction to the
first row after the resume point; the rows after it must be those the
first process read after the same point, in order (count and digest).

Rows of the table:
  s3 cold   a new, empty cache folder each run (HF streaming has no cache:
            every read is cold)
  s3 warm   the cache the cold run just filled, read again by a new process
  proxy cold, proxy warm
            the same through delay_proxy.py in front of the s3rver
  local     the folder on local disk, its files in the page cache
pyarrow has no cache either (its warm rows are cold reads). With
--peer-rows N, LitData and HF read the first N rows of each pass (a 1M-row
pass takes them many minutes): rows/s over those rows, MB/s the table's
bytes over the seconds the whole table would take at that speed.

Each with shuffle off and on (pyarrow and DuckDB: off only; Sluice:
Mosaic's py1e over row groups; LitData: its shuffle, within files; HF:
`.shuffle(seed, buffer_size=1000)`, files shuffled plus a row buffer), in
one process, and with --loader also through a torch DataLoader of 2 workers
(not pyarrow, DuckDB; batches of 64 rows, kept as lists; LitData through
its own StreamingDataLoader with the `spawn` start method, as it asks).
rows/s: the rows
over the seconds from the dataset's construction to its last row (imports
excluded); first: construction to the first row. LitData reads an index.json
beside the files, which index_parquet_dataset writes once per folder before
the runs (not timed; it needs write access to the bucket), into its own
copy of the files (s3://bench/pq-<table>-litdata/), because Sluice takes a
folder with an index.json for an MDS dataset.
Wall-clock on a shared machine: compare within one run only.
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import registry_peers

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

LIBS = ('sluice', 'sluice-mds', 'pyarrow', 'duckdb', 'litdata', 'hf')
PEERS = ('pyarrow', 'duckdb', 'litdata', 'hf')
# The peers that read a --peer-rows prefix of each pass (a pass of 1M rows
# takes them minutes).
CAPPED = ('litdata', 'hf')
SOURCES = ('s3 cold', 's3 warm', 'proxy cold', 'proxy warm', 'local')
TABLES = {'text': 200_000, 'bin1k': 200_000, 'bin256k': 2_000}
FILES, GROUPS = 8, 4
BATCH, SEED, WORKERS = 64, 17, 2
# Each library's copy of a table (folder and bucket prefix): LitData's holds
# its index.json, the MDS twin Sluice's MDS.
SUFFIX = {'sluice': '', 'sluice-mds': '-mds', 'pyarrow': '', 'duckdb': '', 'litdata': '-litdata',
          'hf': ''}


def venv_python():
    """The venv's python, made (and the pins installed) when missing or when
    the pin files changed since."""
    venv = os.environ.get('SLUICE_PARQUET_BENCH_VENV') or os.path.join(
        ROOT, 'build', 'parquet-bench-venv')
    python = os.path.join(venv, 'bin', 'python')
    req = os.path.join(HERE, 'parquet_bench_requirements.txt')
    con = os.path.join(HERE, 'parquet_bench_constraints.txt')
    want = ''.join(open(p).read() for p in (req, con, *registry_peers.pin_files()))
    stamp = os.path.join(venv, 'parquet-bench-requirements')
    if not os.path.exists(python):
        subprocess.run(['/usr/bin/python3', '-m', 'venv', '--system-site-packages', venv],
                       check=True)
    if not os.path.exists(stamp) or open(stamp).read() != want:
        pip = [python, '-m', 'pip', '-q', '--disable-pip-version-check', 'install']
        subprocess.run(pip + ['-r', req, '-c', con], check=True)
        subprocess.run(pip + ['--no-deps', f'litdata=={registry_peers.pins()["litdata"]}'],
                       check=True)
        with open(stamp, 'w') as f:
            f.write(want)
    return python


# ---- the data ----------------------------------------------------------

def write_table(folder, name, rows):
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    tmp = folder + '.partial'
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    rng = np.random.default_rng(0)
    per_file = rows // FILES
    words = np.array([''.join(chr(97 + c) for c in rng.integers(0, 26, rng.integers(2, 9)))
                      for _ in range(4096)])
    for f in range(FILES):
        first = f * per_file
        n = per_file if f < FILES - 1 else rows - first
        if name == 'text':
            text = [' '.join(words[rng.integers(0, len(words), 40)]) for _ in range(n)]
            lengths = rng.integers(32, 193, n)
            offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
            ids = pa.ListArray.from_arrays(
                pa.array(offsets), pa.array(rng.integers(0, 50_000, offsets[-1]).astype(np.int32)))
            table = pa.table({'text': pa.array(text, pa.string()), 'input_ids': ids})
            compression = 'snappy'
        else:
            shift = 18 if name == 'bin256k' else 10
            data = rng.integers(0, 256, n << shift, dtype=np.uint8).tobytes()
            table = pa.table({'id': pa.array(np.arange(first, first + n), pa.int64()),
                              'data': pa.array([data[i << shift:(i + 1) << shift]
                                                for i in range(n)], pa.binary())})
            compression = 'none'
        pq.write_table(table, os.path.join(tmp, f'part-{f:05d}.parquet'),
                       row_group_size=-(-n // GROUPS), compression=compression)
    os.rename(tmp, folder)


def write_mds(folder, dest):
    """The table's rows as MDS (Sluice's MDSWriter), in the files' order, with
    shards of about a row group's bytes; token ids as ndarray:int32."""
    import numpy as np
    import pyarrow.parquet as pq
    import sluice
    tmp = dest + '.partial'
    shutil.rmtree(tmp, ignore_errors=True)
    files = sorted(n for n in os.listdir(folder) if n.endswith('.parquet'))
    total = sum(os.path.getsize(os.path.join(folder, n)) for n in files)
    first = pq.read_schema(os.path.join(folder, files[0]))
    columns = ({'text': 'str', 'input_ids': 'ndarray:int32'} if 'text' in first.names
               else {'id': 'int64', 'data': 'bytes'})
    with sluice.MDSWriter(out=tmp, columns=columns,
                          size_limit=max(1 << 20, total // (FILES * GROUPS))) as out:
        for name in files:
            for batch in pq.ParquetFile(os.path.join(folder, name)).iter_batches():
                for row in batch.to_pylist():
                    if 'input_ids' in row:
                        row['input_ids'] = np.asarray(row['input_ids'], np.int32)
                    out.write(row)
    os.rename(tmp, dest)


def litdata_copy(folder, dest):
    """The files again beside LitData's index.json (hard links)."""
    if not os.path.isdir(dest):
        tmp = dest + '.partial'
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        for name in sorted(os.listdir(folder)):
            if name.endswith('.parquet'):
                os.link(os.path.join(folder, name), os.path.join(tmp, name))
        os.rename(tmp, dest)


def import_litdata():
    import litdata_shims
    return litdata_shims.import_litdata()


def s3_options(endpoint):
    import resume_bench
    return {'key': resume_bench.KEY_ID, 'secret': resume_bench.SECRET,
            'client_kwargs': {'endpoint_url': endpoint, 'region_name': 'us-east-1'}}


# ---- one measurement (a child process in the venv) ----------------------

def keep_rows(rows):
    """DataLoader collate: the batch as the list of rows (token-id lists of
    different lengths do not stack)."""
    return rows


def open_dataset(lib, url, cache, shuffle, endpoint):
    if lib.startswith('sluice'):
        import sluice
        where = {'local': url} if cache is None else {'remote': url, 'local': cache}
        return sluice.StreamingDataset(batch_size=BATCH, shuffle=shuffle, shuffle_seed=SEED,
                                       **where)
    if lib == 'pyarrow':
        return pyarrow_rows(url, cache is not None, endpoint)
    if lib == 'duckdb':
        return duckdb_rows(url)
    if lib == 'litdata':
        litdata = import_litdata()
        from litdata.streaming.item_loader import ParquetLoader
        extra = {} if cache is None else {'cache_dir': cache,
                                          'storage_options': {'endpoint_url': endpoint}}
        return litdata.StreamingDataset(url, item_loader=ParquetLoader(), shuffle=shuffle,
                                        seed=SEED, **extra)
    from datasets import load_dataset
    extra = {} if cache is None else {'storage_options': s3_options(endpoint)}
    ds = load_dataset('parquet', data_files=url.rstrip('/') + '/*.parquet', split='train',
                      streaming=True, **extra)
    return ds.shuffle(seed=SEED, buffer_size=1000) if shuffle else ds


def pyarrow_rows(url, remote, endpoint):
    """pyarrow's rows (dicts), file after file in path order, a ParquetFile
    each read in batches of 1024 rows; from s3 through pyarrow's own S3
    filesystem (no cache: every read is cold)."""
    import pyarrow.fs as pafs
    import pyarrow.parquet as pq
    if remote:
        import resume_bench
        fs = pafs.S3FileSystem(access_key=resume_bench.KEY_ID, secret_key=resume_bench.SECRET,
                               endpoint_override=endpoint.split('://', 1)[1], scheme='http',
                               region='us-east-1')
        root = url[len('s3://'):].rstrip('/')
    else:
        fs, root = pafs.LocalFileSystem(), os.path.abspath(url)
    files = sorted(i.path for i in fs.get_file_info(pafs.FileSelector(root, recursive=True))
                   if i.path.endswith('.parquet'))
    for path in files:
        with fs.open_input_file(path) as f:
            for batch in pq.ParquetFile(f).iter_batches(batch_size=1024):
                yield from batch.to_pylist()


def duckdb_rows(folder):
    """DuckDB's rows (its own Python tuples), SELECT * over the folder's
    files, fetched 1024 at a time."""
    import duckdb
    cursor = duckdb.connect().execute('SELECT * FROM read_parquet(?)',
                                      [os.path.join(folder, '**', '*.parquet')])
    while True:
        rows = cursor.fetchmany(1024)
        if not rows:
            return
        yield from rows


def supports(lib, source, shuffle, workers):
    """Whether the bench measures `lib` on that row: pyarrow and DuckDB
    only in order and in one process; DuckDB only from local files (its S3
    reader, httpfs, is an extension it would download)."""
    if lib in ('pyarrow', 'duckdb') and (shuffle or workers):
        return False
    return lib != 'duckdb' or source == 'local'


def child(lib, url, cache, shuffle, workers, endpoint, limit=0):
    """Prints {"first": s, "seconds": s, "rows": n, "cpu": {...}}; with
    `limit`, the pass stops after that many rows. "cpu": user and system
    seconds of this process over its whole life (imports included) and of
    its DataLoader workers (reaped once the pass ends), so a DataLoader
    pass's CPU splits into the main process's and the workers'."""
    import torch.utils.data  # noqa: F401  (imports are not timed)
    if lib.startswith('sluice'):
        import sluice  # noqa: F401
    elif lib == 'pyarrow':
        import pyarrow.fs  # noqa: F401
        import pyarrow.parquet  # noqa: F401
    elif lib == 'duckdb':
        import duckdb  # noqa: F401
    elif lib == 'litdata':
        import_litdata()
        import polars  # noqa: F401
    else:
        import datasets  # noqa: F401
        import s3fs  # noqa: F401
    start = time.perf_counter()
    ds = open_dataset(lib, url, cache, shuffle, endpoint)
    if workers:
        extra = {}
        if lib == 'litdata':
            loader_class = import_litdata().StreamingDataLoader
            # Its ParquetLoader refuses fork (polars' thread pool).
            extra['multiprocessing_context'] = 'spawn'
        else:
            from torch.utils.data import DataLoader as loader_class
        batches = loader_class(ds, batch_size=BATCH, num_workers=workers, collate_fn=keep_rows,
                               **extra)
    else:
        batches = ([row] for row in ds)
    first, rows = None, 0
    for batch in batches:
        if first is None:
            first = time.perf_counter() - start
        rows += len(batch)
        if limit and rows >= limit:
            break
    seconds = time.perf_counter() - start
    # (A DataLoader's workers were joined when its iterator ended with the
    # loop.)
    own, workers_ = (resource.getrusage(w) for w in (resource.RUSAGE_SELF,
                                                      resource.RUSAGE_CHILDREN))
    cpu = {'main_user': own.ru_utime, 'main_sys': own.ru_stime,
           'workers_user': workers_.ru_utime, 'workers_sys': workers_.ru_stime}
    print(json.dumps({'first': first, 'seconds': seconds, 'rows': rows,
                      'cpu': {k: round(v, 2) for k, v in cpu.items()}}))


def add_row(digest, row):
    """Feeds one row (a dict of str, bytes, int, float, None or numpy arrays)
    into `digest`, each value's type, length and bytes in column order, so
    two passes' digests are equal only when their rows are, in order."""
    for name in sorted(row):
        value = row[name]
        if hasattr(value, 'tobytes'):
            kind, data = f'a{value.dtype.str}{value.shape}', value.tobytes()
        elif isinstance(value, str):
            kind, data = 's', value.encode()
        elif isinstance(value, bytes):
            kind, data = 'b', value
        else:
            kind, data = 'r', repr(value).encode()
        digest.update(f'{name}\0{kind}\0{len(data)}\0'.encode())
        digest.update(data)


def resume_child(phase, url, cache, shuffle, state_file):
    """Sluice's resume: phase 'save' reads half the epoch, writes its
    state_dict, then reads on to the epoch's end and writes the count and
    digest (add_row) of those rows to `state_file`.rest; phase 'resume' (a
    new process) prints {"first": s, "rows": n, "digest": hex} for
    construction + load_state_dict to the first row after it, and the count
    and digest of the rows after it (the caller compares them)."""
    import hashlib
    import sluice
    start = time.perf_counter()
    ds = sluice.StreamingDataset(remote=url, local=cache, batch_size=BATCH, shuffle=shuffle,
                                 shuffle_seed=SEED)
    digest, first, rows = hashlib.blake2b(digest_size=16), None, 0
    if phase == 'save':
        half = len(ds) // 2
        it = iter(ds)
        for i, _ in enumerate(it):
            if i + 1 == half:
                break
        with open(state_file, 'w') as f:
            json.dump(ds.state_dict(half, True), f)
        for row in it:
            add_row(digest, row)
            rows += 1
        with open(state_file + '.rest', 'w') as f:
            json.dump({'rows': rows, 'digest': digest.hexdigest()}, f)
        return
    with open(state_file) as f:
        ds.load_state_dict(json.load(f))
    for row in ds:
        if first is None:
            first = time.perf_counter() - start
        add_row(digest, row)
        rows += 1
    print(json.dumps({'first': first, 'rows': rows, 'digest': digest.hexdigest()}))


# ---- the run -----------------------------------------------------------

class Bench:
    def __init__(self, args, python):
        self.args, self.python = args, python
        self.results = {}  # (table, source, shuffle, workers, lib) -> [(first, rows/s, s)]
        self.resumes = {}  # (table, shuffle, lib) -> [resume first row (s)]
        self.notes = []

    def measure(self, key, lib, url, cache, shuffle, workers, env, expected):
        if not supports(lib, key[1], shuffle, workers):
            return
        whole = expected
        limit = self.args.peer_rows if lib in CAPPED and self.args.peer_rows else 0
        if limit:
            # Whole batches: a loader's last batch may pass the limit.
            expected = min(expected, -(-limit // BATCH) * BATCH if workers else limit)
        argv = [self.python, os.path.abspath(__file__), '--child', lib, url, cache or '',
                '1' if shuffle else '0', str(workers), env.get('S3_ENDPOINT_URL', ''),
                str(limit)]
        try:
            out = subprocess.run(argv, env=env, capture_output=True, text=True, check=True,
                                 timeout=self.args.timeout)
        except subprocess.TimeoutExpired:
            self.notes.append(f'{key} {lib}: no end within {self.args.timeout:.0f} s')
            return
        except subprocess.CalledProcessError as e:
            tail = (e.stderr or '').strip().splitlines()[-3:]
            self.notes.append(f'{key} {lib}: failed: {" | ".join(tail)}')
            return
        got = json.loads(out.stdout.strip().splitlines()[-1])
        if got['rows'] != expected:
            self.notes.append(f'{key} {lib}: {got["rows"]} rows, expected {expected}')
            return
        # Seconds as for the whole table (a capped pass's, scaled by its
        # share of the rows), so that MB/s is the table's bytes over them.
        self.results.setdefault(key + (lib,), []).append(
            (got['first'], got['rows'] / got['seconds'], got['seconds'] * whole / got['rows']))

    def run(self, tables, endpoints):
        """endpoints: 's3' (and 'proxy' with proxy rows) -> (URL, env)."""
        for r in range(self.args.runs):
            for table in tables:
                rows = self.rows(table)
                for workers in ([] if self.args.loader_only else [0]) + (
                        [WORKERS] if self.args.loader or self.args.loader_only else []):
                    for shuffle in self.shuffles():
                        for lib in self.args.libs:
                            self.one_run(table, rows, lib, shuffle, workers, endpoints)
                        if not workers and not self.args.no_resume:
                            for lib in ('sluice', 'sluice-mds'):
                                if lib in self.args.libs:
                                    self.resume(table, rows, lib, shuffle, endpoints['s3'][1])
            print(f'run {r + 1} of {self.args.runs} done', file=sys.stderr, flush=True)

    def shuffles(self):
        return {'no': (False,), 'yes': (True,), 'both': (False, True)}[self.args.shuffle]

    def resume(self, table, rows, lib, shuffle, env):
        """Resume time of Sluice over the Parquet files or their MDS twin."""
        url = f's3://bench/pq-{table}{self.args.tag}{SUFFIX[lib]}/'
        cache = tempfile.mkdtemp(prefix=f'{lib}-', dir=os.path.join(self.args.work, 'caches'))
        state = os.path.join(cache, 'state.json')
        key = (table, shuffle, lib)
        try:
            for phase in ('save', 'resume'):
                out = subprocess.run([self.python, os.path.abspath(__file__), '--resume-child',
                                      phase, url, cache, '1' if shuffle else '0', state],
                                     env=env, capture_output=True, text=True,
                                     timeout=self.args.timeout)
                if out.returncode != 0:
                    tail = ' | '.join(out.stderr.strip().splitlines()[-3:])
                    self.notes.append(f'{key} resume {phase}: failed: {tail}')
                    return
            got = json.loads(out.stdout.strip().splitlines()[-1])
            with open(state + '.rest') as f:
                rest = json.load(f)
            if got['rows'] != rows - rows // 2 or rest['rows'] != got['rows']:
                self.notes.append(f'{key} resume: {got["rows"]} rows after it, expected '
                                  f'{rows - rows // 2} (the uninterrupted pass: {rest["rows"]})')
                return
            if got['digest'] != rest['digest']:
                self.notes.append(f'{key} resume: the rows after it differ from those the '
                                  'uninterrupted pass read after the same point')
                return
            self.resumes.setdefault(key, []).append(got['first'])
        except subprocess.TimeoutExpired:
            self.notes.append(f'{key} resume: no end within {self.args.timeout:.0f} s')
        finally:
            shutil.rmtree(cache, ignore_errors=True)

    def one_run(self, table, rows, lib, shuffle, workers, endpoints):
        suffix = SUFFIX[lib]
        url = f's3://bench/pq-{table}{self.args.tag}{suffix}/'
        for via in ('s3', 'proxy'):
            sources = [s for s in (f'{via} cold', f'{via} warm') if s in self.args.sources]
            if not sources:
                continue
            endpoint, env = endpoints[via]
            cache = tempfile.mkdtemp(prefix=f'{lib}-', dir=os.path.join(self.args.work, 'caches'))
            try:
                if sources == [f'{via} warm']:  # the cache filled by an untimed pass
                    self.measure((table, 'fill', shuffle, workers), lib, url, cache, shuffle,
                                 workers, env, rows)
                for source in sources:
                    self.measure((table, source, shuffle, workers), lib, url, cache, shuffle,
                                 workers, env, rows)
            finally:
                shutil.rmtree(cache, ignore_errors=True)
                self.results.pop((table, 'fill', shuffle, workers, lib), None)
        if 'local' in self.args.sources:
            folder = self.folder(table) + suffix
            self.measure((table, 'local', shuffle, workers), lib, folder, None, shuffle, workers,
                         dict(os.environ), rows)

    def rows(self, table):
        return max(FILES * GROUPS, int(TABLES[table] * self.args.scale))

    def folder(self, table):
        return os.path.join(self.args.work, f'pq-{table}{self.args.tag}')

    def parquet_bytes(self, table):
        folder = self.folder(table)
        return sum(os.path.getsize(os.path.join(folder, n)) for n in os.listdir(folder)
                   if n.endswith('.parquet'))

    def table(self):
        libs = [lib for lib in LIBS if any(k[4] == lib for k in self.results)]
        lines = ['| table | source | shuffle | loader | ' + ' | '.join(
            f'{lib} rows/s | {lib} MB/s | {lib} first (s)' for lib in libs) +
            ' | Sluice / best peer (rows/s) | Sluice Parquet / MDS |',
            '| --- | --- | --- | --- | ' + ' | '.join('---: | ---: | ---:' for _ in libs) +
            ' | ---: | ---: |']
        keys = sorted({k[:4] for k in self.results}, key=lambda k: (
            k[0], SOURCES.index(k[1]), k[3], k[2]))
        for key in keys:
            cells, speed = [], {}
            mb = self.parquet_bytes(key[0]) / 1e6
            for lib in libs:
                got = self.results.get(key + (lib,))
                if not got:
                    cells += ['-', '-', '-']
                    continue
                speed[lib] = statistics.median(s for _, s, _ in got)
                seconds = statistics.median(t for _, _, t in got)
                first = statistics.median(f for f, _, _ in got)
                cells += [f'{speed[lib]:,.0f}', f'{mb / seconds:,.1f}', f'{first:.3f}']
            peers = [speed[lib] for lib in PEERS if lib in speed]
            ratio = f'{speed["sluice"] / max(peers):.2f}' if 'sluice' in speed and peers else '-'
            own = (f'{speed["sluice"] / speed["sluice-mds"]:.0%}'
                   if 'sluice' in speed and 'sluice-mds' in speed else '-')
            table, source, shuffle, workers = key
            lines.append(f'| {table} | {source} | {"yes" if shuffle else "no"} | '
                         f'{f"{workers} workers" if workers else "none"} | '
                         + ' | '.join(cells) + f' | {ratio} | {own} |')
        if self.resumes:
            lines += ['', '| table | shuffle | Sluice Parquet resume (s) | Sluice MDS resume (s) |',
                      '| --- | --- | ---: | ---: |']
            for table, shuffle in sorted({k[:2] for k in self.resumes}):
                cells = [f'{statistics.median(self.resumes[(table, shuffle, lib)]):.3f}'
                         if (table, shuffle, lib) in self.resumes else '-'
                         for lib in ('sluice', 'sluice-mds')]
                lines.append(f'| {table} | {"yes" if shuffle else "no"} | ' + ' | '.join(cells) +
                             ' |')
        return '\n'.join(lines)


def prepare(args, tables, python):
    """The tables on disk, LitData's copies with their index, and all of them
    in the s3rver's bucket (kept under --work between invocations)."""
    import resume_bench
    server = resume_bench.S3rver(os.path.join(args.work, 's3rver'))
    env = resume_bench.s3_env(server.endpoint)
    for table in tables:
        rows = max(FILES * GROUPS, int(TABLES[table] * args.scale))
        folder = os.path.join(args.work, f'pq-{table}{args.tag}')
        if not os.path.isdir(folder):
            subprocess.run([python, os.path.abspath(__file__), '--write', folder, table,
                            str(rows)], check=True)
        copies = [('', folder)]
        if 'litdata' in args.libs:
            litdata_copy(folder, folder + '-litdata')
            copies.append(('-litdata', folder + '-litdata'))
        if 'sluice-mds' in args.libs and not os.path.isdir(folder + '-mds'):
            subprocess.run([python, os.path.abspath(__file__), '--write-mds', folder,
                            folder + '-mds'], check=True)
        if 'sluice-mds' in args.libs:
            copies.append(('-mds', folder + '-mds'))
        prefix = os.path.basename(folder)
        for suffix, source in copies:
            subprocess.run([python, '-c', 'import sys, resume_bench; '
                            'resume_bench.upload(*sys.argv[1:])', source, prefix + suffix,
                            server.endpoint], check=True, env=dict(env, PYTHONPATH=HERE))
        if 'litdata' in args.libs:
            subprocess.run([python, os.path.abspath(__file__), '--index', folder + '-litdata',
                            f's3://bench/{prefix}-litdata', server.endpoint], check=True, env=env)
    return server, env


def index_litdata(folder, url, endpoint):
    """LitData's index.json, beside the local copy and in the bucket."""
    litdata = import_litdata()
    for where, options in ((folder, None), (url, {'endpoint_url': endpoint})):
        if where == folder and os.path.exists(os.path.join(folder, 'index.json')):
            continue
        litdata.index_parquet_dataset(where, storage_options=options, num_workers=2)


def main():
    if sys.argv[1:2] == ['--child']:
        lib, url, cache, shuffle, workers, endpoint, limit = sys.argv[2:9]
        return child(lib, url, cache or None, shuffle == '1', int(workers), endpoint, int(limit))
    if sys.argv[1:2] == ['--resume-child']:
        phase, url, cache, shuffle, state = sys.argv[2:7]
        return resume_child(phase, url, cache, shuffle == '1', state)
    if sys.argv[1:2] == ['--write-mds']:
        return write_mds(*sys.argv[2:4])
    if sys.argv[1:2] == ['--write']:
        return write_table(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    if sys.argv[1:2] == ['--index']:
        return index_litdata(*sys.argv[2:5])
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--work', required=True)
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--scale', type=float, default=1.0)
    ap.add_argument('--tables', default=','.join(TABLES))
    ap.add_argument('--loader', action='store_true', help='also through a DataLoader of 2 workers')
    ap.add_argument('--loader-only', action='store_true', help='only through the DataLoader')
    ap.add_argument('--shuffle', choices=('no', 'yes', 'both'), default='both')
    ap.add_argument('--timeout', type=float, default=600)
    ap.add_argument('--sources', default='s3 cold,s3 warm,local',
                    help='the rows measured (a comma list of ' + ', '.join(SOURCES) + '; proxy: '
                    's3rver behind delay_proxy.py, 15 ms to first byte, 100 MB/s a connection)')
    ap.add_argument('--peer-rows', type=int, default=0,
                    help='LitData and HF read only the first N rows of each pass (rows/s over '
                    'them; MB/s as for the whole table at that speed)')
    ap.add_argument('--no-resume', action='store_true', help="no measure of Sluice's resume")
    ap.add_argument('--libs', default=','.join(LIBS),
                    help='the libraries measured (a comma list of ' + ', '.join(LIBS) + ')')
    args = ap.parse_args()
    args.work = os.path.abspath(args.work)
    args.tag = '' if args.scale == 1 else f'-x{args.scale:g}'
    tables = args.tables.split(',')
    args.libs = [lib for lib in LIBS if lib in args.libs.split(',')]
    args.sources = [s for s in SOURCES if s in args.sources.split(',')]
    os.makedirs(os.path.join(args.work, 'caches'), exist_ok=True)
    python = venv_python()
    server, env = prepare(args, tables, python)
    proxy = None
    try:
        endpoints = {'s3': (server.endpoint, env)}
        if any(s.startswith('proxy') for s in args.sources):
            from delay_proxy import DelayProxy
            proxy = DelayProxy(int(server.endpoint.rsplit(':', 1)[1]), 15.0, 100.0)
            url = f'http://127.0.0.1:{proxy.port}'
            endpoints['proxy'] = (url, dict(env, S3_ENDPOINT_URL=url))
        bench = Bench(args, python)
        bench.run(tables, endpoints)
    finally:
        if proxy:
            proxy.close()
        server.stop()
    print(f'parquet_stream_bench.py {" ".join(sys.argv[1:])}')
    print(f'{time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}; load average '
          f'{" ".join(f"{x:.2f}" for x in os.getloadavg())}; medians of {args.runs} runs')
    versions = subprocess.run([python, '-c', 'from importlib.metadata import version as v; '
                               'print(", ".join(f"{n} {v(n)}" for n in ("litdata", "datasets", '
                               '"pyarrow", "duckdb", "s3fs", "polars", "torch", "numpy")))'],
                              capture_output=True, text=True).stdout.strip()
    print(versions)
    print(bench.table())
    if args.peer_rows:
        print(f'note: {", ".join(CAPPED)} read the first {args.peer_rows:,} rows of each pass')
    for note in bench.notes:
        print('note:', note)


if __name__ == '__main__':
    main()
