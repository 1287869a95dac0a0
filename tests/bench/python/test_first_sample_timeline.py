"""first_sample_timeline.py's print of the proxy's log: the requests sent
before the first sample, in the order sent, in ms from the construction."""
import on_bench_path  # noqa: F401
import first_sample_timeline as timeline  # noqa: E402


def test_show_prints_the_requests_sent_before_the_sample_in_order(capsys):
    log = timeline.Logged.log
    log[:] = [
        {'line': 'GET /data/index.json HTTP/1.1', 'range': 'bytes=0-8388607', 'asked': 100.0105,
         'first': 100.0255, 'last': 100.0256, 'bytes': 9923},
        {'line': 'GET /data/shard.00000.mds HTTP/1.1', 'range': 'bytes=0-1048579',
         'asked': 100.0100, 'first': 100.0250, 'last': 100.0350, 'bytes': 1048859},
        {'line': 'GET /data/shard.00000.mds HTTP/1.1', 'range': 'bytes=0-8388607',
         'asked': 100.0400, 'bytes': 0},
    ]
    try:
        timeline.show('sluice {}', 0.038, 100.038)
    finally:
        log.clear()
    assert capsys.readouterr().out.splitlines() == [
        'sluice {}: first sample 38.0 ms',
        '  sent   10.0  first byte   25.0  last   35.0 ms   1,048,859 B  '
        'GET /data/shard.00000.mds HTTP/1.1  bytes=0-1048579',
        '  sent   10.5  first byte   25.5  last   25.6 ms       9,923 B  '
        'GET /data/index.json HTTP/1.1  bytes=0-8388607',
    ]


def test_a_warm_index_is_in_the_childs_cache_before_it_starts(tmp_path, monkeypatch):
    """--warm-index: the child's empty cache folder gets the dataset's
    index.json (a node's earlier copy) before the child runs; the cold row's
    stays empty; both are removed afterwards."""
    import os
    import types
    index = tmp_path / 'index.json'
    index.write_text('{"version": 2, "shards": []}')
    seen = []

    def run(args, **kwargs):
        cache = args[4]
        seen.append({name: open(os.path.join(cache, name)).read() for name in os.listdir(cache)})
        return types.SimpleNamespace(stdout='ignored\n0.0385 1.5 0.2 100.0385 1\n')

    monkeypatch.setattr(timeline.subprocess, 'run', run)
    work = tmp_path / 'work'
    work.mkdir()
    assert timeline.sluice_first('http://h', str(work), '{}', str(index)) == (0.0385, 100.0385)
    assert timeline.sluice_first('http://h', str(work), '{}') == (0.0385, 100.0385)
    assert seen == [{'index.json': '{"version": 2, "shards": []}'}, {}]
    assert os.listdir(work) == []
