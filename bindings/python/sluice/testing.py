"""Checks for users' own CI.

    from sluice.testing import assert_resume_exact

    def make_dataset():
        return sluice.StreamingDataset(remote=..., local=..., batch_size=8,
                                       shuffle=True, shuffle_seed=17)

    assert_resume_exact(make_dataset)

assert_resume_exact reads one epoch uninterrupted, then again as a job that
is interrupted at seeded random points (state_dict, a new dataset from
make_dataset, load_state_dict) and asserts that the pieces put together are
the uninterrupted order, sample for sample. Under torchrun every rank may
call it with the same arguments: the points are the same on every rank, and
each rank compares its own samples.
"""
import random

import numpy as np

__all__ = ['assert_resume_exact']


def _as_list(batch):
    """A DataLoader collate_fn that keeps a batch's samples as they are."""
    return batch


def _canonical(value):
    """`value` in a form == compares exactly: numpy arrays (and what converts
    to one, PIL images) by dtype, shape and bytes, containers by content."""
    if isinstance(value, dict):
        return ('dict', tuple((k, _canonical(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_canonical(v) for v in value))
    if isinstance(value, np.ndarray):
        return ('ndarray', value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, np.generic):
        return ('scalar', value.dtype.str, value.tobytes())
    if hasattr(value, '__array__') and not isinstance(value, (str, bytes)):
        return _canonical(np.asarray(value))
    return value


def _short(value, limit=200):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + '...'


def _read(make_dataset, stop, state, load_kwargs, num_workers):
    """One piece of the job: a new dataset, resumed from `state` (None: from
    the start), read until `stop` samples of this rank (None: the epoch's
    end). Returns (samples, the state_dict after them)."""
    ds = make_dataset()
    if state is not None:
        ds.load_state_dict(state, **load_kwargs)
    samples = []
    if num_workers:
        from sluice.dataloader import StreamingDataLoader
        loader = StreamingDataLoader(ds, batch_size=ds.batch_size, num_workers=num_workers,
                                     collate_fn=_as_list)
        for batch in loader:
            samples.extend(batch)
            if stop is not None and len(samples) >= stop:
                break
        # loader.state_dict() without its guess of a batch's size from its
        # first item (a sample, here): the samples are counted.
        return samples, ds.state_dict(ds._job_samples(len(samples)), False)
    for sample in ds:
        samples.append(sample)
        if stop is not None and len(samples) >= stop:
            break
    return samples, ds.state_dict(ds._job_samples(len(samples)), False)


def assert_resume_exact(make_dataset, *, interruptions=3, seed=0, num_workers=0,
                        max_samples=None, key=None, load_kwargs=None):
    """Asserts that resuming `make_dataset()`'s epoch 0 from its state_dict
    yields exactly the rest of the uninterrupted order.

    make_dataset: a callable returning a new StreamingDataset (or subclass)
      configured as the job's; it is called 2 + `interruptions` times.
    interruptions: how many times the job is interrupted, at distinct points
      drawn with random.Random(seed) from this rank's samples (whole batches
      of the dataset's batch_size when num_workers > 0, as a DataLoader
      checkpoints between batches).
    num_workers: 0 reads the dataset in this process; more reads it through
      a StreamingDataLoader with that many workers and its state_dict.
    max_samples: compare only this rank's first `max_samples` samples
      (default: the whole epoch).
    key: a function of a sample giving what is compared (default: the whole
      sample, numpy arrays by dtype, shape and bytes).
    load_kwargs: passed to every load_state_dict (e.g. adapt=...).

    Raises AssertionError naming the first differing position (in this
    rank's order), the piece it came from, the interruption points and both
    samples. Returns the interruption points (this rank's sample counts).
    """
    key = key or _canonical
    load_kwargs = dict(load_kwargs or {})
    whole, _ = _read(make_dataset, max_samples, None, load_kwargs, num_workers)
    whole = [key(s) for s in whole]
    if len(whole) < 2:
        raise ValueError(f'assert_resume_exact needs at least 2 samples per rank to interrupt '
                         f'between, the dataset gave {len(whole)}')
    unit = make_dataset().batch_size if num_workers else 1
    slots = list(range(unit, len(whole), unit))
    if len(slots) < interruptions:
        raise ValueError(f'cannot interrupt {interruptions} times: this rank reads {len(whole)} '
                         f'samples, {len(slots)} places between '
                         f'{"batches" if num_workers else "samples"}')
    points = sorted(random.Random(seed).sample(slots, interruptions))
    resumed, origin = [], []
    state = None
    for piece, stop in enumerate(points + [max_samples]):
        want = None if stop is None else stop - len(resumed)
        samples, state = _read(make_dataset, want, state, load_kwargs, num_workers)
        resumed.extend(key(s) for s in samples)
        origin.extend([piece] * len(samples))
    where = f'interrupted after {points} samples of this rank (seed {seed})'
    for i, (a, b) in enumerate(zip(whole, resumed)):
        if a != b:
            raise AssertionError(
                f'resume is not exact: position {i} differs ({where}; it came from piece '
                f'{origin[i]}, resumed at {([0] + points)[origin[i]]}): uninterrupted '
                f'{_short(a)}, resumed {_short(b)}')
    if len(whole) != len(resumed):
        i = min(len(whole), len(resumed))
        more = 'resumed run' if len(resumed) > len(whole) else 'uninterrupted run'
        extra = resumed[i] if len(resumed) > len(whole) else whole[i]
        raise AssertionError(
            f'resume is not exact: the uninterrupted run yielded {len(whole)} samples, the '
            f'resumed run {len(resumed)} ({where}); position {i} is only in the {more}: '
            f'{_short(extra)}')
    return points
