"""mosaicml-streaming's text datasets (`streaming.text`): StreamingC4 and
StreamingPile tokenize each sample's 'text' with a HuggingFace tokenizer,
StreamingEnWiki turns the BERT pre-training fields Mosaic's converter wrote
as raw bytes into numpy arrays. Their defaults are Mosaic's for these
classes (see sluice.builtin_dataset), so the sample order is Mosaic's. Decoding goes through get_item,
so iteration, a DataLoader and resumption all see the decoded samples.

`transformers` is imported when a tokenizing dataset is built, not when
this module is: EnWiki needs no tokenizer."""
import importlib

import numpy as np

from sluice.builtin_dataset import BuiltinDataset

__all__ = ['StreamingC4', 'StreamingEnWiki', 'StreamingPile']


def _load_tokenizer(cls_name, tokenizer_name):
    """The tokenizer `AutoTokenizer.from_pretrained(tokenizer_name)` gives,
    with the end-of-sequence token as padding when it has none (as Mosaic
    sets it)."""
    try:
        transformers = importlib.import_module('transformers')
    except ImportError as e:
        raise ImportError(f'{cls_name} tokenizes with HuggingFace transformers, which is not '
                          f'installed (pip install transformers)') from e
    tokenizer = transformers.AutoTokenizer.from_pretrained(tokenizer_name)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


class _TokenizedText(BuiltinDataset):
    """A StreamingDataset whose samples are their 'text' field tokenized:
    truncated and padded to max_seq_len ('truncate', the one group_method)."""

    _GROUP_METHOD_ERROR = None  # each subclass's own text, as Mosaic words it

    def __init__(self, *, tokenizer_name, max_seq_len, group_method, **kwargs):
        if group_method != 'truncate':
            raise ValueError(self._GROUP_METHOD_ERROR.format(group_method=group_method))
        super().__init__(**kwargs)
        self.tokenizer_name = tokenizer_name
        self.max_seq_len = max_seq_len
        self.group_method = group_method
        self.tokenizer = _load_tokenizer(type(self).__name__, tokenizer_name)

    def _tokenize(self, text_sample):
        return self.tokenizer(text_sample['text'], truncation=True, padding='max_length',
                              max_length=self.max_seq_len)

    def get_item(self, idx):
        return self._tokenize(super().get_item(idx))


class StreamingC4(_TokenizedText):
    """C4 as Mosaic's convert script writes it ('text', 'timestamp', 'url')."""

    _GROUP_METHOD_ERROR = "group_method='{group_method}' must be one of {{'truncate'}}."


class StreamingPile(_TokenizedText):
    """The Pile as Mosaic's convert script writes it ('text', 'pile_set_name')."""

    _GROUP_METHOD_ERROR = 'Only group_method="truncate" is supported at this time.'


class StreamingEnWiki(BuiltinDataset):
    """English Wikipedia BERT pre-training samples as Mosaic's convert script
    writes them (each field raw bytes of int32, masked_lm_weights float32).
    A sample is input_ids, token_type_ids (the segment ids), attention_mask
    (the input mask) and labels: -100 everywhere but at the masked positions,
    which hold the masked token ids."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.field_dtypes = {
            'input_ids': np.int32,
            'input_mask': np.int32,
            'attention_mask': np.int32,
            'segment_ids': np.int32,
            'token_type_ids': np.int32,
            'masked_lm_positions': np.int32,
            'masked_lm_ids': np.int32,
            'masked_lm_weights': np.float32,
            'next_sentence_labels': np.int32,
            'labels': np.int32,
        }

    def get_item(self, idx):
        fields = {key: np.frombuffer(value, self.field_dtypes[key])
                  for key, value in super().get_item(idx).items()}
        labels = np.full((len(fields['input_ids']),), -100)
        labels[fields['masked_lm_positions']] = fields['masked_lm_ids']
        return {
            'input_ids': fields['input_ids'].copy(),
            'token_type_ids': fields['segment_ids'].copy(),
            'attention_mask': fields['input_mask'].copy(),
            'labels': labels,
        }
