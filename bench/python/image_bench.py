"""An image workload in the form of the table the seeds quote (ImageNet
images/s for StreamingDataset, ImageFolder and WebDataset): synthetic JPEGs
of about 110 KB (500 x 375), decoded with PIL, resized to 224 x 224 and
turned into uint8 tensors in DataLoader workers. Images/s and CPU
milliseconds per image (the process and its workers, user + system) for:

  imagefolder    a plain map-style dataset over the files (the ImageFolder
                 pattern), shuffled by the DataLoader
  sluice         sluice.StreamingDataset over MDS, decoding in __getitem__
                 (a subclass, as image datasets written for Mosaic do)
  sluice-files   sluice.StreamingFileDataset over the same files, decoding
                 the yielded path in `transform`
  mosaic         mosaicml-streaming's StreamingDataset over the same MDS, the
                 same subclass (registry_peers.py, or a checkout: --mosaic-src)
  litdata        LitData's StreamingDataset over its own `optimize`d copy,
                 the same subclass (registry_peers.py, or a checkout: --litdata-src)

Every contender reads one shuffled epoch from local disk (page cache warm
after the first run), batch 32, the same workers; each must yield every
image once (the count and the sum of labels are checked). Each run is a
fresh process; runs are interleaved; prints median, min and max of R runs.

    SLUICE_LIBRARY=build/bindings/c/libsluice.so PYTHONPATH=bindings/python \\
        /usr/bin/python3 bench/python/image_bench.py --data /tmp/sluice-images \\
        [--images 20000] [--runs 3] [--workers 2] [--mosaic-src DIR] [--litdata-src DIR] [--no-registry]

--data keeps the written images and datasets between invocations (writing
20,000 JPEGs takes a few minutes on 2 cores).
"""
import argparse
import io
import json
import os
import statistics
import subprocess
import sys
from multiprocessing import Pool

import registry_peers

HERE = os.path.dirname(os.path.abspath(__file__))
H, W = 375, 500
CLASSES = 100
NOISE_LEVEL = 30  # gives JPEGs of about 110 KB at quality 90


def make_jpeg(i):
    """Image i: a coloured wave (differs per image) under noise, as JPEG."""
    import numpy as np
    from PIL import Image
    noise = np.random.default_rng(1000 + i % 8).normal(0, NOISE_LEVEL, (H, W, 3)).astype(np.float32)
    rng = np.random.default_rng(i)
    y = np.linspace(0, 1, H, dtype=np.float32)[:, None, None]
    x = np.linspace(0, 1, W, dtype=np.float32)[None, :, None]
    colour = (rng.random((1, 1, 3)) * 255).astype(np.float32)
    base = colour * (0.5 + 0.5 * np.sin(6.28 * (x * rng.random() * 4 + y * rng.random() * 4)))
    out = io.BytesIO()
    Image.fromarray(np.clip(base + noise, 0, 255).astype(np.uint8)).save(out, 'JPEG', quality=90)
    return out.getvalue()


def image_path(files, i):
    return os.path.join(files, f'c{i % CLASSES:03d}', f'img{i:06d}.jpg')


def write_one(args):
    files, i = args
    path = image_path(files, i)
    with open(path + '.tmp', 'wb') as f:
        f.write(make_jpeg(i))
    os.rename(path + '.tmp', path)


def litdata_item(path):
    """One LitData sample: the file's bytes and its class (from the folder)."""
    with open(path, 'rb') as f:
        return {'x': f.read(), 'y': int(os.path.basename(os.path.dirname(path))[1:])}


def prepare(data, images, litdata_src):
    """The files, the MDS copy and (with litdata_src) LitData's copy, each
    written once and marked done."""
    files, mds, ld = (os.path.join(data, n) for n in ('files', 'mds', 'litdata'))
    done = os.path.join(data, f'done-{images}.json')
    state = json.load(open(done)) if os.path.exists(done) else {}
    if not state.get('files'):
        for c in range(CLASSES):
            os.makedirs(os.path.join(files, f'c{c:03d}'), exist_ok=True)
        with Pool(os.cpu_count()) as pool:
            pool.map(write_one, [(files, i) for i in range(images)], chunksize=64)
        state['files'] = True
        json.dump(state, open(done, 'w'))
    if not state.get('mds'):
        import sluice
        with sluice.MDSWriter(out=mds, columns={'x': 'bytes', 'y': 'int'},
                              size_limit=1 << 26) as w:
            for i in range(images):
                with open(image_path(files, i), 'rb') as f:
                    w.write({'x': f.read(), 'y': i % CLASSES})
        state['mds'] = True
        json.dump(state, open(done, 'w'))
    if litdata_src and not state.get('litdata'):
        sys.path.insert(0, HERE)
        from litdata_shims import import_litdata
        litdata = import_litdata(litdata_src)
        litdata.optimize(fn=litdata_item, inputs=[image_path(files, i) for i in range(images)],
                         output_dir=ld, chunk_bytes='64MB', num_workers=os.cpu_count())
        state['litdata'] = True
        json.dump(state, open(done, 'w'))
    return files, mds, ld


# One epoch of one contender in a fresh process; prints images, label sum,
# seconds (from building the dataset to the last batch).
CHILD = r'''
import io, json, os, sys, time
import numpy as np
import torch
import torch.utils.data as tud
from PIL import Image
kind, folder, workers, batch, src, here = sys.argv[1:7]
workers, batch = int(workers), int(batch)


def decode(data):
    img = Image.open(data if isinstance(data, str) else io.BytesIO(data))  # a path or a buffer
    img = img.convert('RGB').resize((224, 224), Image.BILINEAR)
    return torch.from_numpy(np.array(img)).permute(2, 0, 1)


def label_of(path):
    return int(os.path.basename(os.path.dirname(path))[1:])


def decoding(base):
    class Images(base):
        def __getitem__(self, i):
            s = super().__getitem__(i)
            return decode(s['x']), int(s['y'])
    return Images


class Files(tud.Dataset):
    def __init__(self, root):
        self.paths = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs
                            if f.endswith('.jpg'))

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        return decode(self.paths[i]), label_of(self.paths[i])


def from_path(path):
    return decode(path), label_of(path)


t0 = time.perf_counter()
loader_kwargs = {}
if kind == 'imagefolder':
    ds = Files(folder)
    loader_kwargs['shuffle'] = True
elif kind == 'sluice':
    import sluice
    ds = decoding(sluice.StreamingDataset)(local=folder, batch_size=batch, shuffle=True)
elif kind == 'sluice-files':
    from sluice.file_dataset import StreamingFileDataset
    ds = StreamingFileDataset(local=folder, output='path', transform=from_path,
                              batch_size=batch, shuffle=True)
elif kind == 'mosaic':
    sys.path.insert(0, os.path.join(here, '..', 'compare'))
    from mosaic_stubs import import_streaming
    streaming, _ = import_streaming(src)
    ds = decoding(streaming.StreamingDataset)(local=folder, batch_size=batch, shuffle=True)
elif kind == 'litdata':
    sys.path.insert(0, here)
    from litdata_shims import import_litdata
    litdata = import_litdata(src)
    ds = decoding(litdata.StreamingDataset)(folder, shuffle=True)
    loader = litdata.StreamingDataLoader(ds, batch_size=batch, num_workers=workers)
if kind != 'litdata':
    loader = tud.DataLoader(ds, batch_size=batch, num_workers=workers, **loader_kwargs)
n = labels = 0
for images, ys in loader:
    assert images.shape[1:] == (3, 224, 224) and images.dtype == torch.uint8, images.shape
    n += len(ys)
    labels += int(ys.sum())
print(json.dumps({'n': n, 'labels': labels, 's': time.perf_counter() - t0}))
'''


def run(kind, folder, workers, batch, src):
    """(seconds, CPU seconds of the child and its workers, images, label sum)."""
    before = os.times()
    p = subprocess.run([sys.executable, '-c', CHILD, kind, folder, str(workers), str(batch),
                        src or '', HERE], capture_output=True, text=True)
    after = os.times()
    if p.returncode != 0:
        raise RuntimeError(f'{kind} failed:\n{p.stderr[-3000:]}')
    out = json.loads(p.stdout.strip().splitlines()[-1])
    cpu = (after.children_user - before.children_user) + (after.children_system -
                                                          before.children_system)
    return out['s'], cpu, out['n'], out['labels']


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--data', required=True, help='where the images and datasets are kept')
    ap.add_argument('--images', type=int, default=20000)
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--workers', type=int, default=2)
    ap.add_argument('--batch', type=int, default=32)
    registry_peers.add_arguments(ap)
    ap.add_argument('--contenders', default='imagefolder,sluice,sluice-files,mosaic,litdata')
    args = ap.parse_args()
    registry_peers.resolve(args)
    os.makedirs(args.data, exist_ok=True)
    data = os.path.join(args.data, str(args.images))
    files, mds, ld = prepare(data, args.images, args.litdata_src)
    kinds = args.contenders.split(',')
    if not args.mosaic_src and 'mosaic' in kinds:
        kinds.remove('mosaic')
    if not args.litdata_src and 'litdata' in kinds:
        kinds.remove('litdata')
    where = {'imagefolder': (files, None), 'sluice': (mds, None), 'sluice-files': (files, None),
             'mosaic': (mds, args.mosaic_src), 'litdata': (ld, args.litdata_src)}
    expected = (args.images, sum(i % CLASSES for i in range(args.images)))
    results = {k: [] for k in kinds}
    for _ in range(args.runs):
        for k in kinds:
            seconds, cpu, n, labels = run(k, *where[k][:1], args.workers, args.batch, where[k][1])
            if (n, labels) != expected:
                raise RuntimeError(f'{k}: {n} images with label sum {labels}, expected {expected}')
            results[k].append((seconds, cpu))
    size = sum(os.path.getsize(image_path(files, i)) for i in range(args.images)) / args.images
    print(f'{args.images} JPEGs of {size / 1000:.0f} KB on average, {args.workers} DataLoader '
          f'workers, batch {args.batch}, one shuffled epoch, {args.runs} runs')
    best = statistics.median(args.images / s for s, _ in results['imagefolder']) \
        if 'imagefolder' in results else None
    print(f'{"contender":14} {"images/s":>9} {"(min":>7} {"max)":>7} {"CPU ms/image":>13} '
          f'{"vs imagefolder":>15}')
    for k, rs in results.items():
        rates = [args.images / s for s, _ in rs]
        cpu = statistics.median(c for _, c in rs) / args.images * 1000
        ratio = f'{statistics.median(rates) / best:.2f}x' if best else '-'
        print(f'{k:14} {statistics.median(rates):9.0f} {min(rates):7.0f} {max(rates):7.0f} '
              f'{cpu:13.2f} {ratio:>15}')


if __name__ == '__main__':
    main()
