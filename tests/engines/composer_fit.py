"""One Composer run over a Sluice dataset, started as Composer's users start
one: `composer -n N composer_fit.py CONFIG_JSON` (Composer's launcher sets
RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, which Sluice reads as Mosaic does).
test_composer.py runs it.

CONFIG_JSON: {"folder", "out", "batch", "workers", "max_duration" (Composer's
Time string), "save" ({"folder", "filename", "interval"} for
Trainer(save_folder=...), or null), "load" (a checkpoint path for
Trainer(load_path=...), or null)}. Each rank writes out/rank{R}.json: the
batches its model's forward was given, in order, each as {"worker": the
DataLoader worker that made it, "ids": its sample ids}.
"""
import json
import os
import sys

import torch
from composer import Trainer
from composer.models import ComposerModel
from composer.utils import dist

import sluice


def collate(samples):
    """Runs in the DataLoader worker that read the samples; the worker goes
    in a tensor as long as the batch (Composer counts a batch's samples by
    its tensors)."""
    info = torch.utils.data.get_worker_info()
    ids = torch.tensor([int(s['id']) for s in samples])
    return {'ids': ids, 'worker': torch.full_like(ids, -1 if info is None else info.id)}


class Recorder(ComposerModel):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(1, 1)
        self.seen = []

    def forward(self, batch):
        self.seen.append({'worker': int(batch['worker'][0]), 'ids': batch['ids'].tolist()})
        return self.linear(batch['ids'].float().unsqueeze(1) / 1000)

    def loss(self, outputs, batch):
        return torch.nn.functional.mse_loss(outputs, batch['ids'].float().unsqueeze(1) / 1000)


def main(config):
    dataset = sluice.StreamingDataset(local=config['folder'], shuffle=True, shuffle_seed=7,
                                      batch_size=config['batch'])
    loader = sluice.StreamingDataLoader(dataset, batch_size=config['batch'],
                                        num_workers=config['workers'], collate_fn=collate)
    model = Recorder()
    save = config['save'] or {}
    trainer = Trainer(model=model, train_dataloader=loader,
                      optimizers=torch.optim.SGD(model.parameters(), lr=0.1),
                      max_duration=config['max_duration'], device='cpu',
                      save_folder=save.get('folder'),
                      save_filename=save.get('filename', 'ep{epoch}-ba{batch}-rank{rank}.pt'),
                      save_interval=save.get('interval', '1ep'), save_latest_filename=None,
                      load_path=config['load'], progress_bar=False, log_to_console=False,
                      loggers=[], seed=17)
    trainer.fit()
    with open(os.path.join(config['out'], f'rank{dist.get_global_rank()}.json'), 'w') as f:
        json.dump({'world_size': dist.get_world_size(), 'seen': model.seen,
                   'env': {k: os.environ.get(k) for k in
                           ('RANK', 'WORLD_SIZE', 'LOCAL_RANK', 'LOCAL_WORLD_SIZE')}}, f)
    trainer.close()


if __name__ == '__main__':
    main(json.loads(sys.argv[1]))
