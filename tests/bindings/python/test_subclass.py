"""Subclasses written for mosaicml-streaming get what they override: Mosaic's
iteration maps self.__getitem__ over the planned ids, so a subclass that
tokenizes in __getitem__ (as LLM Foundry's text dataset does) or decodes in
get_item sees every sample it yields pass through its override, in plan
order, through a DataLoader and across resumption, local or streamed."""
import os

import pytest
from torch.utils.data import DataLoader

import sluice

# torch warns that this machine has 2 cores when asked for 2 workers.
pytestmark = pytest.mark.filterwarnings('ignore:This DataLoader will create')

SAMPLES = 300


def write(folder):
    with sluice.MDSWriter(out=folder, columns={'id': 'int', 'text': 'str'},
                          size_limit=2048) as w:
        for i in range(SAMPLES):
            w.write({'id': i, 'text': f'sample {i}'})


class Tokenizing(sluice.StreamingDataset):
    """LLM Foundry's pattern: the base class's sample, then tokenize."""

    def __getitem__(self, idx):
        sample = super().__getitem__(idx)
        return {'id': sample['id'], 'tokens': [ord(c) for c in sample['text']]}


class Decoding(sluice.StreamingDataset):
    """StreamingC4's pattern: work done in get_item."""

    def get_item(self, idx, retry=7):
        sample = super().get_item(idx)
        sample['length'] = len(sample['text'])
        return sample


def tokens(i):
    return [ord(c) for c in f'sample {i}']


@pytest.fixture(params=['local', 'streamed'])
def make(request, tmp_path):
    data = str(tmp_path / 'data')
    write(data)

    def build(cls, **kwargs):
        if request.param == 'local':
            return cls(local=data, batch_size=4, shuffle=True, shuffle_seed=9, **kwargs)
        cache = str(tmp_path / f'cache{len(os.listdir(tmp_path))}')
        return cls(remote=data, local=cache, batch_size=4, shuffle=True, shuffle_seed=9,
                   **kwargs)
    return build


def plain_order(make):
    return [int(s['id']) for s in make(sluice.StreamingDataset)]


def test_iteration_goes_through_an_overridden_getitem(make):
    order = plain_order(make)
    assert sorted(order) == list(range(SAMPLES))
    got = list(make(Tokenizing))
    assert [int(s['id']) for s in got] == order
    assert all(s['tokens'] == tokens(int(s['id'])) for s in got)
    ds = make(Tokenizing)
    assert ds[7] == {'id': 7, 'tokens': tokens(7)}


def test_iteration_goes_through_an_overridden_get_item(make):
    order = plain_order(make)
    got = list(make(Decoding))
    assert [int(s['id']) for s in got] == order
    assert all(s['length'] == len(f'sample {s["id"]}') for s in got)
    # Indexing too, with slices and lists as Mosaic's Array allows.
    ds = make(Decoding)
    assert [s['length'] for s in ds[2:5]] == [len(f'sample {i}') for i in (2, 3, 4)]
    assert [int(s['id']) for s in ds[[9, 1]]] == [9, 1]


def test_dataloader_workers_see_the_override(make):
    order = plain_order(make)
    loader = DataLoader(make(Tokenizing), batch_size=4, num_workers=2,
                        collate_fn=lambda batch: batch)
    got = [s for batch in loader for s in batch]
    assert sorted(int(s['id']) for s in got) == sorted(order)
    assert all(s['tokens'] == tokens(int(s['id'])) for s in got)


def test_resumption_goes_through_the_override(make):
    order = plain_order(make)
    first = make(Tokenizing)
    it = iter(first)
    for _ in range(100):
        next(it)
    state = first.state_dict(100, True)
    ds = make(Tokenizing)
    ds.load_state_dict(state)
    got = list(ds)
    assert [int(s['id']) for s in got] == order[100:]
    assert all(s['tokens'] == tokens(int(s['id'])) for s in got)
