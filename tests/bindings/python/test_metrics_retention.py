"""metrics_retention_s: how long the node's metrics record of an ended
process is kept, given to StreamingDataset (the engine checks it and falls
back to SLUICE_METRICS_RETENTION_S). An ended process's record is made by a
child process that reads the dataset and exits."""
import os
import subprocess
import sys
import time

import pytest

import sluice
from sluice.file_dataset import StreamingFileDataset

CHILD = '''
import sys, sluice
ds = sluice.StreamingDataset(local=sys.argv[1], batch_size=4)
assert len([s for s in ds]) == 20
ds.publish_metrics()
'''


@pytest.fixture
def folder(tmp_path, monkeypatch):
    local = tmp_path / 'local'
    with sluice.MDSWriter(out=str(local), columns={'id': 'int'}, size_limit=1 << 8) as w:
        for i in range(20):
            w.write({'id': i})
    state = tmp_path / 'state'
    state.mkdir()
    monkeypatch.setenv('SLUICE_CACHE_STATE_DIR', str(state))
    return local, state


def records(state):
    return sorted(str(p) for p in state.rglob('*.rec'))


def test_the_option_prunes_an_ended_process_record_multiprocess(folder, monkeypatch):
    local, state = folder
    subprocess.run([sys.executable, '-c', CHILD, str(local)], check=True, env=os.environ.copy())
    [ended] = records(state)
    old = time.time() - 120
    os.utime(ended, (old, old))
    # A bad variable is left unread when the option is given.
    monkeypatch.setenv('SLUICE_METRICS_RETENTION_S', '1d')
    kept = sluice.StreamingDataset(local=str(local), batch_size=4, metrics_retention_s=3600)
    assert kept.metrics_retention_s == 3600
    assert kept.metrics('node')['processes'] == 2
    assert ended in records(state)
    pruned = sluice.StreamingDataset(local=str(local), batch_size=4, metrics_retention_s=60)
    assert pruned.metrics('node')['processes'] == 2  # the two datasets of this process
    assert ended not in records(state)
    # Without the option the variable applies, and a bad one is said.
    default = sluice.StreamingDataset(local=str(local), batch_size=4)
    with pytest.raises(ValueError) as e:
        default.metrics('node')
    assert str(e.value) == ("invalid argument: environment variable SLUICE_METRICS_RETENTION_S "
                            "'1d': expected a number of seconds (a decimal integer)")


@pytest.mark.parametrize(('value', 'message'), [
    (-1, "invalid argument: dataset config: 'metrics_retention_s' must be a number of "
         "seconds, 0 or more"),
    (1.5, "invalid argument: dataset config: 'metrics_retention_s' must be an integer"),
    ('1d', "invalid argument: dataset config: 'metrics_retention_s' must be an integer"),
    (True, "invalid argument: dataset config: 'metrics_retention_s' must be an integer"),
])
def test_a_bad_value_is_refused_at_open(folder, value, message):
    local, _ = folder
    with pytest.raises(ValueError) as e:
        sluice.StreamingDataset(local=str(local), metrics_retention_s=value)
    assert str(e.value) == message


def test_the_file_dataset_takes_the_option_multiprocess(folder, tmp_path):
    """StreamingFileDataset passes the option to the engine as StreamingDataset does."""
    _, state = folder
    files = tmp_path / 'files'
    files.mkdir()
    (files / 'a.txt').write_bytes(b'a')
    child = ('import sys\nfrom sluice.file_dataset import StreamingFileDataset\n'
             'ds = StreamingFileDataset(local=sys.argv[1], output="bytes", batch_size=1)\n'
             'assert list(ds) == [b"a"]\nds.publish_metrics()\n')
    subprocess.run([sys.executable, '-c', child, str(files)], check=True, env=os.environ.copy())
    [ended] = records(state)
    old = time.time() - 120
    os.utime(ended, (old, old))
    kept = StreamingFileDataset(local=str(files), batch_size=1, metrics_retention_s=3600)
    assert kept.metrics_retention_s == 3600
    kept.metrics('node')
    assert ended in records(state)
    pruned = StreamingFileDataset(local=str(files), batch_size=1, metrics_retention_s=60)
    pruned.metrics('node')
    assert ended not in records(state)
    with pytest.raises(ValueError) as e:
        StreamingFileDataset(local=str(files), batch_size=1, metrics_retention_s=-1)
    assert str(e.value) == ("invalid argument: dataset config: 'metrics_retention_s' must be a "
                            "number of seconds, 0 or more")


def test_a_dataset_prunes_when_it_first_records_without_a_sum_multiprocess(folder):
    """Nobody sums the node: reading prunes the expired records anyway."""
    local, state = folder
    subprocess.run([sys.executable, '-c', CHILD, str(local)], check=True, env=os.environ.copy())
    [ended] = records(state)
    old = time.time() - 120
    os.utime(ended, (old, old))
    kept = sluice.StreamingDataset(local=str(local), batch_size=4, metrics_retention_s=3600)
    assert len(list(kept)) == 20
    assert ended in records(state)
    pruned = sluice.StreamingDataset(local=str(local), batch_size=4, metrics_retention_s=60)
    assert len(list(pruned)) == 20
    assert ended not in records(state)
