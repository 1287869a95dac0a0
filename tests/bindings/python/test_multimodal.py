"""sluice.multimodal (served as streaming.multimodal): the WebVid classes.
Outside videos are fetched into extra_local once, in get_item, so
iteration and the DataLoader see them; StreamingOutsideDTWebVid also
fetches them ahead from a download thread."""
import itertools
import os
import time

import pytest
from torch.utils.data import DataLoader

import sluice
from sluice.multimodal import (StreamingInsideWebVid, StreamingOutsideDTWebVid,
                               StreamingOutsideGIWebVid)


def video(i):
    return bytes([i]) * (100 + i)


@pytest.fixture
def webvid(tmp_path):
    shards, videos = str(tmp_path / 'shards'), tmp_path / 'videos'
    for i in range(6):
        (videos / f'c{i % 2}').mkdir(parents=True, exist_ok=True)
        (videos / f'c{i % 2}' / f'v{i}.mp4').write_bytes(video(i))
    with sluice.MDSWriter(out=shards, columns={'content_path': 'str', 'caption': 'str'},
                          size_limit=1 << 10) as w:
        for i in range(6):
            w.write({'content_path': f'c{i % 2}/v{i}.mp4', 'caption': f'clip {i}'})
    return shards, str(videos)


def test_inside_yields_the_samples_as_stored(webvid):
    shards, _ = webvid
    ds = StreamingInsideWebVid(local=shards, batch_size=2, num_canonical_nodes=1)
    assert ds[4] == {'content_path': 'c0/v4.mp4', 'caption': 'clip 4'}
    assert [s['caption'] for s in ds] == [f'clip {i}' for i in range(6)]


def test_outside_fetches_each_video_once_into_extra_local(webvid, tmp_path):
    shards, videos = webvid
    extra_local = str(tmp_path / 'fetched')
    ds = StreamingOutsideGIWebVid(local=shards, batch_size=2, num_canonical_nodes=1,
                                  extra_local=extra_local, extra_remote=videos)
    assert ds[3] == {'content_path': 'c1/v3.mp4', 'caption': 'clip 3', 'content': video(3)}
    assert os.listdir(extra_local + '/c1') == ['v3.mp4']
    # A fetched video is read from extra_local, not fetched again.
    with open(os.path.join(extra_local, 'c1', 'v3.mp4'), 'wb') as f:
        f.write(b'already here')
    assert ds[3]['content'] == b'already here'
    got = {int(c.split()[1]): bytes(v) for b in DataLoader(ds, batch_size=2, num_workers=2)
           for c, v in zip(b['caption'], b['content'])}
    assert got == {i: (b'already here' if i == 3 else video(i)) for i in range(6)}


def test_outside_without_extra_folders_leaves_samples_as_stored(webvid):
    shards, _ = webvid
    ds = StreamingOutsideGIWebVid(local=shards, batch_size=2, num_canonical_nodes=1)
    assert ds[0] == {'content_path': 'c0/v0.mp4', 'caption': 'clip 0'}


def test_a_missing_video_names_it(webvid, tmp_path):
    shards, videos = webvid
    os.remove(os.path.join(videos, 'c0', 'v2.mp4'))
    ds = StreamingOutsideGIWebVid(local=shards, batch_size=2, num_canonical_nodes=1,
                                  extra_local=str(tmp_path / 'fetched'), extra_remote=videos)
    with pytest.raises(FileNotFoundError, match='v2.mp4'):
        ds[2]


def test_served_as_streaming_multimodal():
    import sluice.streaming_alias as alias
    alias.install()
    try:
        from streaming.multimodal import StreamingInsideWebVid as Inside
        from streaming.multimodal.webvid import StreamingOutsideDTWebVid as DT
        from streaming.multimodal.webvid import StreamingOutsideGIWebVid as Outside
        assert (Inside, Outside, DT) == (StreamingInsideWebVid, StreamingOutsideGIWebVid,
                                         StreamingOutsideDTWebVid)
    finally:
        alias.uninstall()


def sample(i, content=None):
    """WebVid sample i as stored, with its video's bytes as 'content'."""
    return {'content_path': f'c{i % 2}/v{i}.mp4', 'caption': f'clip {i}',
            'content': video(i) if content is None else content}


def fetched(folder):
    """The videos in `folder`, without downloads still being written (their
    temporaries are named '<video>.tmp<pid>.<thread>')."""
    return sorted(os.path.relpath(os.path.join(d, f), folder)
                  for d, _, files in os.walk(folder) for f in files if '.tmp' not in f)


def wait_for(condition):
    deadline = time.monotonic() + 20
    while not condition():
        assert time.monotonic() < deadline, 'timed out'
        time.sleep(0.01)


# Shuffled, so that the order is the plan's and not the ids'.
ORDER = dict(batch_size=2, num_canonical_nodes=1, shuffle=True, shuffle_seed=5)


def test_outside_dt_yields_gis_samples_and_fetches_ahead_within_predownload(webvid, tmp_path):
    shards, videos = webvid
    dt_local = str(tmp_path / 'dt')
    ds = StreamingOutsideDTWebVid(local=shards, predownload=2, extra_local=dt_local,
                                  extra_remote=videos, **ORDER)
    order = ds.plan().worker_ids(0, 0, 0).tolist()
    assert sorted(order) == list(range(6)) and order != list(range(6))
    want = [sample(i) for i in order]
    it = iter(ds)
    first = next(it)
    # One sample taken, predownload 2: the thread fetches the next two
    # samples' videos, and no further until the consumer moves on.
    ahead = sorted(sample(i)['content_path'] for i in order[:3])
    wait_for(lambda: fetched(dt_local) == ahead)
    time.sleep(0.2)
    assert fetched(dt_local) == ahead
    assert [first] + list(it) == want
    assert ds._video_prefetch.finished.is_set()
    # What GI yields for the same dataset, and ds[i] alike.
    gi = StreamingOutsideGIWebVid(local=shards, extra_local=str(tmp_path / 'gi'),
                                  extra_remote=videos, **ORDER)
    assert list(gi) == want
    assert ds[order[4]] == want[4]


def test_outside_dt_dataloader_workers_each_fetch_their_own(webvid, tmp_path):
    shards, videos = webvid
    ds = StreamingOutsideDTWebVid(local=shards, extra_local=str(tmp_path / 'dt'),
                                  extra_remote=videos, **ORDER)
    per_worker = [ds.plan(workers=2).worker_ids(0, 0, w).tolist() for w in range(2)]
    order = [i for pair in itertools.zip_longest(*per_worker) for i in pair if i is not None]
    got = [{k: v for k, v in s.items()} for s in DataLoader(ds, batch_size=None, num_workers=2)]
    assert got == [sample(i) for i in order]
    assert fetched(str(tmp_path / 'dt')) == sorted(sample(i)['content_path'] for i in range(6))


def test_outside_dt_a_failed_fetch_fails_the_next_sample(webvid, tmp_path):
    shards, videos = webvid
    ds = StreamingOutsideDTWebVid(local=shards, predownload=2, extra_local=str(tmp_path / 'dt'),
                                  extra_remote=videos, **ORDER)
    order = ds.plan().worker_ids(0, 0, 0).tolist()
    missing = sample(order[2])['content_path']
    os.remove(os.path.join(videos, missing))
    it = iter(ds)
    # Within predownload 2, the thread reaches the third sample only once the
    # first is taken.
    assert next(it) == sample(order[0])
    assert ds._video_prefetch.finished.wait(20)
    with pytest.raises(RuntimeError, match=r'^Background thread failed\. Check other '
                                           r'traceback\.$') as e:
        next(it)
    assert isinstance(e.value.__cause__, FileNotFoundError)
    assert missing.split('/')[1] in str(e.value.__cause__)


def test_outside_dt_a_downloader_that_cannot_be_made_fails_the_next_sample(webvid, tmp_path,
                                                                            monkeypatch):
    shards, videos = webvid
    ds = StreamingOutsideDTWebVid(local=shards, predownload=2, extra_local=str(tmp_path / 'dt'),
                                  extra_remote=videos, **ORDER)

    def refuse(remote):
        raise OSError(f'no downloader for {remote}')

    import sluice.video_prefetch
    monkeypatch.setattr(sluice.video_prefetch.CloudDownloader, 'get', staticmethod(refuse))
    it = iter(ds)
    with pytest.raises(RuntimeError, match=r'^Background thread failed\.') as e:
        next(it)
        assert ds._video_prefetch.finished.wait(20)
        next(it)
    assert str(e.value.__cause__) == f'no downloader for {videos}'


def test_outside_dt_without_extra_folders_leaves_samples_as_stored(webvid):
    shards, _ = webvid
    ds = StreamingOutsideDTWebVid(local=shards, **ORDER)
    order = ds.plan().worker_ids(0, 0, 0).tolist()
    assert list(ds) == [{'content_path': f'c{i % 2}/v{i}.mp4', 'caption': f'clip {i}'}
                        for i in order]
