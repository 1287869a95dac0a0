"""Code written for mosaicml-streaming, unchanged but for its first import,
run on Sluice: writes a dataset, reads it in Mosaic's shuffled order, and
takes the state_dict a checkpoint would keep."""
import tempfile

import sluice.streaming_alias  # noqa: F401  (before anything imports `streaming`)
from streaming import MDSWriter, StreamingDataset
from streaming.base.util import bytes_to_int

with tempfile.TemporaryDirectory() as folder:
    columns = {'id': 'int', 'text': 'str'}
    with MDSWriter(out=folder, columns=columns, size_limit=bytes_to_int('1kb')) as out:
        for i in range(100):
            out.write({'id': i, 'text': f'sample {i}'})
    dataset = StreamingDataset(local=folder, batch_size=4, shuffle=True, shuffle_seed=7)
    print(len(dataset), 'samples in', dataset.num_shards, 'shards; sample 3:', dataset[3])
    order = [sample['id'] for sample in dataset]
    print('first 10:', order[:10])
    print(dataset.state_dict(num_samples=10, from_beginning=True))
