"""One Hugging Face Accelerate run over a Sluice dataset, started as its
users start one on several processes: `accelerate launch --multi_gpu
--num_processes N accelerate_fit.py CONFIG_JSON` (Accelerate's launcher is
torchrun's: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, which Sluice
reads as Mosaic does; without a GPU each process is Accelerate's MULTI_CPU,
gloo). The loader is not given to accelerator.prepare: Sluice already
gives each rank its own samples, which Accelerate's sharding of an
IterableDataset would split again. It is registered for checkpointing
(accelerator.register_for_checkpointing), so save_state and load_state
carry its state_dict. test_accelerate.py runs it.

CONFIG_JSON: {"folder", "out", "batch", "workers", "max_steps" (-1: the
whole epoch), "save" (a folder for accelerator.save_state after step
max_steps, or null), "resume" (a folder for accelerator.load_state before
training, or null)}. Each rank writes out/rank{R}.json: the batches its
training loop was given, in order, each as {"worker": the DataLoader worker
that made it, "ids": its sample ids}, and the environment's world.
"""
import json
import os
import sys

import torch

if not hasattr(torch.cpu, 'device_count'):
    # Accelerate's MULTI_CPU state sets its device through torch.cpu's
    # device_count() and set_device(), which torch has from 2.1 on (1 and a
    # no-op there); Debian's torch 1.13 has neither. The same two, defined
    # as torch 2.1 defines them, before Accelerate asks.
    torch.cpu.device_count = lambda: 1
    torch.cpu.set_device = lambda device: None

from accelerate import Accelerator  # noqa: E402

import sluice  # noqa: E402


def collate(samples):
    """Runs in the DataLoader worker that read the samples."""
    info = torch.utils.data.get_worker_info()
    return {'ids': torch.tensor([int(s['id']) for s in samples]),
            'worker': -1 if info is None else info.id}


def main(config):
    accelerator = Accelerator(cpu=True)
    model = torch.nn.Linear(1, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = accelerator.prepare(model, optimizer)
    dataset = sluice.StreamingDataset(local=config['folder'], shuffle=True, shuffle_seed=7,
                                      batch_size=config['batch'])
    loader = sluice.StreamingDataLoader(dataset, batch_size=config['batch'],
                                        num_workers=config['workers'], collate_fn=collate)
    accelerator.register_for_checkpointing(loader)
    if config['resume']:
        accelerator.load_state(config['resume'])
    seen = []
    for batch in loader:
        seen.append({'worker': batch['worker'], 'ids': batch['ids'].tolist()})
        x = batch['ids'].float().unsqueeze(1) / 1000
        loss = torch.nn.functional.mse_loss(model(x), x)
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        if len(seen) == config['max_steps']:
            break
    if config['save']:
        accelerator.save_state(config['save'])
    with open(os.path.join(config['out'], f'rank{accelerator.process_index}.json'), 'w') as f:
        json.dump({'world_size': accelerator.num_processes, 'seen': seen,
                   'env': {k: os.environ.get(k) for k in
                           ('RANK', 'WORLD_SIZE', 'LOCAL_RANK', 'LOCAL_WORLD_SIZE')}}, f)
    accelerator.wait_for_everyone()


if __name__ == '__main__':
    main(json.loads(sys.argv[1]))
