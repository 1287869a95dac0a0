"""Run by test_torchrun.py under torchrun: every rank iterates the dataset
through a DataLoader with 2 workers and rank 0 writes all ranks' batches."""
import json
import sys

import torch.distributed as dist
from torch.utils.data import DataLoader

import sluice


def ids(batch):
    return [int(s['id']) for s in batch]


def main(data, out):
    dist.init_process_group('gloo')
    ds = sluice.StreamingDataset(local=data, batch_size=4, shuffle=True, shuffle_seed=5,
                                 num_canonical_nodes=2)
    batches = list(DataLoader(ds, batch_size=4, num_workers=2, collate_fn=ids))
    everyone = [None] * dist.get_world_size()
    dist.all_gather_object(everyone, {'rank': dist.get_rank(), 'batches': batches,
                                      'len': len(ds)})
    if dist.get_rank() == 0:
        with open(out, 'w') as f:
            json.dump(everyone, f)
    dist.destroy_process_group()


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
