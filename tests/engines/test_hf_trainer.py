"""transformers.Trainer (pinned transformers and accelerate) trains a tiny
model for one epoch on a sluice.StreamingDataset, an IterableDataset, in one
process on the CPU. The model records the sample ids of every batch it is
given; they must be exactly the ids mosaicml-streaming's StreamingDataset
(the oracle, same arguments) yields through a torch DataLoader with the same
batch size and workers, in order and shuffled, every sample once.
No hub, no download: the model is a torch module, the dataset a local folder.

One process only: with these pins two ranks on the CPU (torchrun) do not
start training. accelerate 0.33 and later ask torch.cpu.device_count() for a
multi-CPU state, which torch has from 2.1 on (Debian's is 1.13), and 0.32.1,
the last release without that call, fails under transformers 4.46.3
(Trainer's optimizer.train() reaches AdamW, which has none).
"""
import pytest
import torch

import sluice

SAMPLES = 203  # not a multiple of the batch or the workers
BATCH = 4


class RecordingModel(torch.nn.Module):
    """What Trainer needs of a model: forward(**batch) -> {'loss': ...}.
    It runs in the training process, so it sees the batches in the order
    Trainer steps through them (whichever DataLoader worker made them)."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(1, 1)
        self.seen_ids = []
        self.seen_workers = set()

    def forward(self, ids, worker):
        self.seen_ids.extend(ids.tolist())
        self.seen_workers.update(worker.tolist())
        x = ids.float().unsqueeze(1) / SAMPLES
        return {'loss': torch.nn.functional.mse_loss(self.linear(x), x)}


def collate(samples):
    """Runs in the DataLoader worker that read the samples."""
    info = torch.utils.data.get_worker_info()
    return {'ids': torch.tensor([int(s['id']) for s in samples]),
            'worker': torch.tensor([-1 if info is None else info.id])}


def mosaic_ids(args, workers):
    import streaming
    loader = torch.utils.data.DataLoader(streaming.StreamingDataset(**args), batch_size=BATCH,
                                         num_workers=workers, collate_fn=collate)
    return [i for batch in loader for i in batch['ids'].tolist()]


@pytest.fixture(scope='module')
def folder(tmp_path_factory):
    out = tmp_path_factory.mktemp('hf') / 'data'
    with sluice.MDSWriter(out=str(out), columns={'id': 'int', 'text': 'str'},
                          size_limit=1 << 10) as w:
        for i in range(SAMPLES):
            w.write({'id': i, 'text': 'sample %d' % i})
    return str(out)


@pytest.mark.parametrize('workers', [0, 2])
@pytest.mark.parametrize('shuffle', [False, True])
def test_trainer_sees_the_samples_mosaic_yields(folder, tmp_path, workers, shuffle):
    from transformers import Trainer, TrainingArguments

    args = dict(local=folder, shuffle=shuffle, shuffle_seed=7, batch_size=BATCH)
    model = RecordingModel()
    training = TrainingArguments(
        output_dir=str(tmp_path / 'out'), num_train_epochs=1,
        per_device_train_batch_size=BATCH, dataloader_num_workers=workers,
        # Trainer would otherwise drop the batch keys forward() does not name
        # before the collator sees the samples.
        remove_unused_columns=False,
        # MLflow and TensorBoard are installed here: no reporting, no files.
        report_to='none', save_strategy='no', logging_strategy='no',
        use_cpu=True, disable_tqdm=True)
    Trainer(model=model, args=training, train_dataset=sluice.StreamingDataset(**args),
            data_collator=collate).train()

    theirs = mosaic_ids(args, workers)
    assert model.seen_ids == theirs
    assert sorted(model.seen_ids) == list(range(SAMPLES))
    assert model.seen_workers == ({-1} if workers == 0 else {0, 1})
    if shuffle:
        assert model.seen_ids != list(range(SAMPLES))
