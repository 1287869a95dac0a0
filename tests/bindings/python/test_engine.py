"""sluice.engine: iteration hands out every sample's exact bytes in the
planned order whatever the sample sizes (large samples are taken a few per
engine call, small ones many)."""
import sluice


def test_large_and_small_samples_keep_their_bytes_and_order(tmp_path):
    sizes = [(300 << 10) if i % 5 == 0 else 100 + i for i in range(60)]
    folder = str(tmp_path / 'ds')
    with sluice.MDSWriter(out=folder, columns={'id': 'int', 'data': 'bytes'},
                          size_limit=1 << 20) as w:
        for i, n in enumerate(sizes):
            w.write({'id': i, 'data': bytes([i]) * n})
    ds = sluice.StreamingDataset(local=folder, batch_size=4, shuffle=True, shuffle_seed=2)
    order = ds.work(sluice.world.World(), 0).reshape(-1).tolist()
    got = list(ds)
    assert [s['id'] for s in got] == [i for i in order if i >= 0]
    assert all(s['data'] == bytes([s['id']]) * sizes[s['id']] for s in got)
