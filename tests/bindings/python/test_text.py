"""sluice.text (served as streaming.text): Mosaic's text datasets decode in
get_item, so indexing, iteration and the DataLoader see tokenized (C4, the
Pile) or array (EnWiki) samples, in Mosaic's order for these classes.

Debian has no HuggingFace `transformers`: a stand-in module gives
AutoTokenizer a character tokenizer that records how it was called."""
import sys
import types

import numpy as np
import pytest
from torch.utils.data import DataLoader

import sluice
from sluice.text import StreamingC4, StreamingEnWiki, StreamingPile

TEXTS = ['hello world', 'a', 'streaming text longer than eight', 'xyz', 'tokens', 'c4', 'pile',
         'wiki']


class CharTokenizer:
    """Token = code point; pads with pad_token's code point to max_length."""
    loaded = []

    def __init__(self, name):
        self.name = name
        self.pad_token = None
        self.eos_token = '~'

    @classmethod
    def from_pretrained(cls, name):
        cls.loaded.append(name)
        return cls(name)

    def __call__(self, text, truncation, padding, max_length):
        assert truncation is True and padding == 'max_length'
        ids = [ord(c) for c in text][:max_length]
        mask = [1] * len(ids) + [0] * (max_length - len(ids))
        ids += [ord(self.pad_token)] * (max_length - len(ids))
        return {'input_ids': ids, 'attention_mask': mask}


@pytest.fixture
def transformers(monkeypatch):
    module = types.ModuleType('transformers')
    module.AutoTokenizer = CharTokenizer
    monkeypatch.setitem(sys.modules, 'transformers', module)
    CharTokenizer.loaded = []
    return module


@pytest.fixture
def c4(tmp_path):
    folder = str(tmp_path / 'c4')
    with sluice.MDSWriter(out=folder, columns={'text': 'str', 'timestamp': 'str', 'url': 'str'},
                          size_limit=200) as w:
        for i, text in enumerate(TEXTS):
            w.write({'text': text, 'timestamp': f't{i}', 'url': f'https://example.com/{i}'})
    return folder


def tokens(text, n=8):
    ids = [ord(c) for c in text][:n]
    return {'input_ids': ids + [ord('~')] * (n - len(ids)),
            'attention_mask': [1] * len(ids) + [0] * (n - len(ids))}


@pytest.mark.parametrize('cls', [StreamingC4, StreamingPile])
def test_tokenizing_datasets_tokenize_in_get_item(cls, c4, transformers):
    ds = cls(local=c4, batch_size=2, num_canonical_nodes=1, tokenizer_name='gpt2',
             max_seq_len=8, group_method='truncate')
    assert CharTokenizer.loaded == ['gpt2']
    assert ds.tokenizer.pad_token == '~'  # the end-of-sequence token, as Mosaic sets it
    assert ds[0] == tokens('hello world')
    assert ds[2] == tokens('streaming text longer than eight')
    assert [s['input_ids'] for s in ds] == [tokens(t)['input_ids'] for t in TEXTS]


def test_group_method_errors_are_mosaics(c4, transformers):
    with pytest.raises(ValueError, match=r"^group_method='concat' must be one of \{'truncate'\}\.$"):
        StreamingC4(local=c4, tokenizer_name='gpt2', max_seq_len=8, group_method='concat')
    with pytest.raises(ValueError, match=r'^Only group_method="truncate" is supported at this '
                                         r'time\.$'):
        StreamingPile(local=c4, tokenizer_name='gpt2', max_seq_len=8, group_method='concat')


def test_order_is_mosaics_for_these_classes(c4, transformers):
    ds = StreamingC4(local=c4, batch_size=2, shuffle=True, num_canonical_nodes=2,
                     tokenizer_name='gpt2', max_seq_len=40, group_method='truncate')
    plain = sluice.StreamingDataset(local=c4, batch_size=2, shuffle=True, shuffle_algo='py1s',
                                    partition_algo='orig', shuffle_block_size=1 << 18,
                                    num_canonical_nodes=2)
    order = [s['text'] for s in plain]
    assert sorted(order) == sorted(TEXTS)
    assert [s['input_ids'] for s in ds] == [tokens(t, 40)['input_ids'] for t in order]


def test_without_transformers_the_error_says_so(c4, monkeypatch):
    monkeypatch.setitem(sys.modules, 'transformers', None)  # import fails
    with pytest.raises(ImportError, match=r'^StreamingC4 tokenizes with HuggingFace '
                                          r'transformers, which is not installed'):
        StreamingC4(local=c4, tokenizer_name='gpt2', max_seq_len=8, group_method='truncate')


def enwiki_sample(i):
    """Fields as Mosaic's enwiki converter writes them: raw int32 / float32."""
    ids = np.arange(10, 16, dtype=np.int32) + i
    return {
        'input_ids': ids.tobytes(),
        'input_mask': np.array([1, 1, 1, 1, 0, 0], np.int32).tobytes(),
        'segment_ids': np.array([0, 0, 1, 1, 0, 0], np.int32).tobytes(),
        'masked_lm_positions': np.array([1, 3], np.int32).tobytes(),
        'masked_lm_ids': np.array([100 + i, 200 + i], np.int32).tobytes(),
        'masked_lm_weights': np.array([1.0, 0.5], np.float32).tobytes(),
        'next_sentence_labels': np.array([i % 2], np.int32).tobytes(),
    }


@pytest.fixture
def enwiki(tmp_path):
    folder = str(tmp_path / 'enwiki')
    columns = {name: 'bytes' for name in enwiki_sample(0)}
    with sluice.MDSWriter(out=folder, columns=columns, size_limit=400) as w:
        for i in range(6):
            w.write(enwiki_sample(i))
    return folder


def test_enwiki_decodes_fields_and_masks_labels(enwiki):
    ds = StreamingEnWiki(local=enwiki, batch_size=2, num_canonical_nodes=1)
    s = ds[4]
    assert sorted(s) == ['attention_mask', 'input_ids', 'labels', 'token_type_ids']
    assert s['input_ids'].dtype == np.int32 and s['input_ids'].tolist() == [14, 15, 16, 17, 18, 19]
    assert s['attention_mask'].tolist() == [1, 1, 1, 1, 0, 0]
    assert s['token_type_ids'].tolist() == [0, 0, 1, 1, 0, 0]
    assert s['labels'].tolist() == [-100, 104, -100, 204, -100, -100]
    assert s['input_ids'].flags.writeable  # copies, not views of the shard
    batches = list(DataLoader(ds, batch_size=2, num_workers=2))
    labels = sorted(row.tolist() for b in batches for row in b['labels'])
    assert labels == sorted([-100, 100 + i, -100, 200 + i, -100, -100] for i in range(6))


def test_served_as_streaming_text():
    import sluice.streaming_alias as alias
    alias.install()
    try:
        from streaming.text import StreamingC4 as C4, StreamingEnWiki as EnWiki
        from streaming.text.pile import StreamingPile as Pile
        assert (C4, EnWiki, Pile) == (StreamingC4, StreamingEnWiki, StreamingPile)
    finally:
        alias.uninstall()
