"""sluice.multimodal (served as streaming.multimodal): the WebVid classes.
Outside videos are fetched into extra_local once, in get_item, so
iteration and the DataLoader see them."""
import os

import pytest
from torch.utils.data import DataLoader

import sluice
from sluice.multimodal import StreamingInsideWebVid, StreamingOutsideGIWebVid


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
        from streaming.multimodal.webvid import StreamingOutsideGIWebVid as Outside
        assert (Inside, Outside) == (StreamingInsideWebVid, StreamingOutsideGIWebVid)
    finally:
        alias.uninstall()
