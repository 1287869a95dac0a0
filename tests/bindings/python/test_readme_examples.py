"""README.md's mixture schedule and token packing examples, run as printed
(its bucket and /tmp folders pointed at a local s3rver and the test's
folder) over small datasets uploaded there; each is at most ten lines."""
import glob
import itertools
import os
import pathlib

import numpy as np
import pytest

from sluice import MDSWriter
from sluice.remote import remote_write
from s3rver_fixture import s3, s3rver  # noqa: F401

README = (pathlib.Path(__file__).resolve().parents[3] / 'README.md').read_text()


def example_under(heading):
    """The first indented code block after `## heading`."""
    lines = README.split('\n## ' + heading, 1)[1].splitlines()[1:]
    start = next(i for i, line in enumerate(lines) if line.startswith('    '))
    block = list(itertools.takewhile(lambda line: line.startswith('    '), lines[start:]))
    return '\n'.join(line[4:] for line in block)


def run_example(heading, s3_url, folder):
    code = example_under(heading)
    assert len(code.splitlines()) <= 10, code
    assert 's3://bucket/' in code and '/tmp/' in code
    code = code.replace('s3://bucket/', s3_url + '/').replace('/tmp/', f'{folder}/')
    names = {}
    exec(compile(code, f'README.md ({heading})', 'exec'), names)  # noqa: S102
    return names


def upload(columns, samples, url, folder):
    with MDSWriter(out=str(folder), columns=columns, size_limit=1 << 12) as w:
        for sample in samples:
            w.write(sample)
    for path in sorted(glob.glob(f'{folder}/*')):
        with open(path, 'rb') as f:
            remote_write(url, os.path.basename(path), f.read())


def test_the_mixture_schedule_example_runs(s3, tmp_path):
    sizes = {'web': 70, 'code': 20, 'math': 10}
    for name, n in sizes.items():
        upload({'text': 'str'}, [{'text': f'{name} {i}'} for i in range(n)], f'{s3}/{name}',
               tmp_path / 'src' / name)
    names = run_example('Mixture schedules', s3, tmp_path)
    ds = names['ds']
    head = [s['text'] for s in itertools.islice(iter(ds), 200)]
    # As the plan of the schedule says (test_mixture.py checks the orders),
    # each stream without a repeat before it is exhausted, and at weights
    # 0.7/0.2/0.1 at the start: web 140, code 40, math 20 within a sample.
    plan = ds.plan(epoch=0).worker_ids(0, 0, 0)[:200]
    assert head == [ds[int(i)]['text'] for i in plan]
    counts = {name: sum(t.startswith(name + ' ') for t in head) for name in sizes}
    assert abs(counts['web'] - 140) <= 1 and abs(counts['code'] - 40) <= 1 \
        and abs(counts['math'] - 20) <= 1, counts
    for name, n in sizes.items():
        first = [t for t in head if t.startswith(name + ' ')][:n]
        assert len(set(first)) == len(first), name


def test_the_token_packing_example_runs(s3, tmp_path):
    rng = np.random.default_rng(5)
    docs = [rng.integers(1, 50_000, size=int(rng.integers(1, 3000))).astype(np.int32)
            for _ in range(40)]
    upload({'tokens': 'ndarray:int32'}, [{'tokens': d} for d in docs], f'{s3}/tokenized',
           tmp_path / 'src')
    names = run_example('Token packing', s3, tmp_path)
    row = names['row']
    assert sorted(row) == ['cu_seqlens', 'num_documents', 'position_ids', 'segment_ids',
                           'tokens']
    assert row['tokens'].dtype == np.int64 and row['tokens'].shape == (4096,)
    assert row['segment_ids'].dtype == np.int32 and row['position_ids'].dtype == np.int32
    # bin keeps every token: the rows without their padding are the
    # documents' tokens, each followed by eos_id 0.
    rows = list(names['ds'])
    out = np.concatenate([r['tokens'][r['segment_ids'] > 0] for r in rows])
    expect = np.concatenate([np.append(d, 0) for d in docs]).astype(np.int64)
    assert sorted(out.tolist()) == sorted(expect.tolist())
