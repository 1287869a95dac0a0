"""One Lightning run over a Sluice dataset, started as Mosaic's guide starts
one: `torchrun --nproc_per_node=N lightning_fit.py CONFIG_JSON`. Lightning
finds torchrun's ranks (its TorchElasticEnvironment) and Sluice reads the
world from torchrun's RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, as Mosaic does.
(Lightning's own launcher, `python lightning_fit.py` with devices=2, exports
WORLD_SIZE and LOCAL_RANK but no RANK or LOCAL_WORLD_SIZE: Sluice, reading
them as Mosaic does, then takes every rank for rank 0 of a node of its own.)
test_lightning.py runs it.

CONFIG_JSON: {"folder", "out", "batch", "workers", "devices", "max_steps"
(-1: the whole epoch), "save" (ModelCheckpoint's path, without .ckpt, for a
checkpoint after step max_steps, or null), "resume" (a checkpoint path to
fit from, or null)}. Each rank writes out/rank{R}.json: the batches its
training_step was given, in order, each as {"worker": the DataLoader worker
that made it, "ids": its sample ids}, and the environment's world.
"""
import json
import os
import sys

import lightning
from lightning.pytorch.callbacks import ModelCheckpoint
import torch

import sluice


def collate(samples):
    """Runs in the DataLoader worker that read the samples."""
    info = torch.utils.data.get_worker_info()
    return {'ids': torch.tensor([int(s['id']) for s in samples]),
            'worker': -1 if info is None else info.id}


class Recorder(lightning.LightningModule):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(1, 1)
        self.seen = []

    def _register_sharded_tensor_state_dict_hooks_if_available(self):
        # Lightning 2.2 registers ShardedTensor's state_dict hooks on torch
        # < 2.1, but Debian's torch 1.13 cannot import
        # torch.distributed._shard on Python 3.11 (a dataclass field with a
        # mutable default, which 3.11 refuses). This model has no sharded
        # tensor for them to save.
        pass

    def training_step(self, batch, batch_idx):
        self.seen.append({'worker': batch['worker'], 'ids': batch['ids'].tolist()})
        x = batch['ids'].float().unsqueeze(1) / 1000
        return torch.nn.functional.mse_loss(self.linear(x), x)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


class Data(lightning.LightningDataModule):
    """Makes the loader where Lightning's guide makes one: in
    train_dataloader(), which runs in each rank once the ranks are up."""

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.loader = None

    def train_dataloader(self):
        dataset = sluice.StreamingDataset(local=self.config['folder'], shuffle=True,
                                          shuffle_seed=7, batch_size=self.config['batch'])
        self.loader = sluice.StreamingDataLoader(dataset, batch_size=self.config['batch'],
                                                 num_workers=self.config['workers'],
                                                 collate_fn=collate)
        return self.loader


def main(config):
    model = Recorder()
    data = Data(config)
    trainer = lightning.Trainer(
        accelerator='cpu', devices=config['devices'],
        strategy='ddp' if config['devices'] > 1 else 'auto',
        max_epochs=1, max_steps=config['max_steps'],
        # A checkpoint after the last step, while the loop and its loader
        # are live (one written after fit returns has no loader state).
        callbacks=[ModelCheckpoint(dirpath=os.path.dirname(config['save']),
                                   filename=os.path.basename(config['save']),
                                   every_n_train_steps=config['max_steps'], save_top_k=-1)]
        if config['save'] else [],
        enable_checkpointing=bool(config['save']), logger=False, enable_progress_bar=False,
        enable_model_summary=False, default_root_dir=config['out'])
    trainer.fit(model, datamodule=data, ckpt_path=config['resume'])
    with open(os.path.join(config['out'], f'rank{trainer.global_rank}.json'), 'w') as f:
        json.dump({'world_size': trainer.world_size, 'seen': model.seen,
                   'env': {k: os.environ.get(k) for k in
                           ('RANK', 'WORLD_SIZE', 'LOCAL_RANK', 'LOCAL_WORLD_SIZE')}}, f)


if __name__ == '__main__':
    main(json.loads(sys.argv[1]))
