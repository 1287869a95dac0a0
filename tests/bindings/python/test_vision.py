"""sluice.vision (served as streaming.vision): Mosaic's image datasets yield
(x, y) through their transforms, in Mosaic's order for these classes."""
import numpy as np
import pytest
import torch
from PIL import Image
from torch.utils.data import DataLoader

import sluice
from sluice.vision import (StreamingADE20K, StreamingCIFAR10, StreamingCOCO, StreamingImageNet,
                           StreamingVisionDataset, to_tensor)


def pixels(i):
    return np.arange(12, dtype=np.uint8).reshape(2, 2, 3) * (i + 1)


@pytest.fixture
def cifar(tmp_path):
    folder = str(tmp_path / 'cifar')
    with sluice.MDSWriter(out=folder, columns={'x': 'pil', 'y': 'int'}, size_limit=300) as w:
        for i in range(20):
            w.write({'x': Image.fromarray(pixels(i), 'RGB'), 'y': i % 10})
    return folder


def test_items_are_tensor_and_label(cifar):
    ds = StreamingCIFAR10(local=cifar, batch_size=2)
    x, y = ds[3]
    assert y == 3 and x.dtype == torch.float32 and x.shape == (3, 2, 2)
    expect = torch.from_numpy(pixels(3).transpose(2, 0, 1).astype(np.float32)) / 255
    assert torch.equal(x, expect)
    gray = Image.fromarray(np.array([[0, 255], [51, 102]], np.uint8), 'L')
    assert torch.equal(to_tensor(gray), torch.tensor([[[0, 255], [51, 102]]]) / 255.0)


def test_transforms_and_their_conflict(cifar):
    ds = StreamingImageNet(local=cifar, batch_size=2, transform=lambda img: img.size,
                           target_transform=lambda y: -y)
    assert ds[5] == ((2, 2), -5)
    joint = StreamingVisionDataset(local=cifar, batch_size=2,
                                   transforms=lambda x, y: (x.mode, y * 10))
    assert joint[4] == ('RGB', 40)
    with pytest.raises(ValueError, match=r'^Only transforms or transform/target_transform can be '
                                         r'passed as an argument$'):
        StreamingVisionDataset(local=cifar, batch_size=2, transforms=lambda x, y: (x, y),
                               transform=lambda x: x)


def test_iteration_uses_mosaics_defaults_and_goes_through_get_item(cifar):
    ds = StreamingCIFAR10(local=cifar, batch_size=4, shuffle=True, num_canonical_nodes=2,
                          transform=lambda img: int(np.asarray(img)[0, 0, 1]))
    plain = sluice.StreamingDataset(local=cifar, batch_size=4, shuffle=True, shuffle_algo='py1s',
                                    partition_algo='orig', shuffle_block_size=1 << 18,
                                    num_canonical_nodes=2)
    order = [int(s['y']) for s in plain]
    assert [y for _, y in ds] == order
    assert order != [int(s['y']) for s in sluice.StreamingDataset(
        local=cifar, batch_size=4, shuffle=True, num_canonical_nodes=2)]  # Sluice's defaults
    # the transform saw each image: its green value is 1 * (sample + 1)
    loader = DataLoader(ds, batch_size=4, num_workers=2)
    got = [(int(x), int(y)) for xs, ys in loader for x, y in zip(xs, ys)]
    assert all((x - 1) % 10 == y for x, y in got)  # each label with its own image
    assert {x for x, _ in got} == set(range(1, 21))  # every image


def test_ade20k_applies_joint_then_each_transform(tmp_path):
    folder = str(tmp_path / 'ade20k')
    with sluice.MDSWriter(out=folder, columns={'x': 'jpeg', 'y': 'png'}, size_limit=1 << 16) as w:
        for i in range(4):
            w.write({'x': Image.fromarray(np.full((4, 6, 3), 40 * i, np.uint8), 'RGB'),
                     'y': Image.fromarray(np.full((4, 6), i, np.uint8), 'L')})
    plain = StreamingADE20K(local=folder, batch_size=2, num_canonical_nodes=1)
    x, y = plain[2]
    assert (x.mode, x.size, y.mode, np.asarray(y).tolist()) == ('RGB', (6, 4), 'L', [[2] * 6] * 4)
    calls = []

    def joint(pair):
        calls.append('joint')
        return pair[1], pair[0]  # swapped, so the per-side transforms show the order

    ds = StreamingADE20K(local=folder, batch_size=2, num_canonical_nodes=1,
                         joint_transform=joint, transform=lambda v: ('x', v.mode),
                         target_transform=lambda v: ('y', v.mode))
    assert ds[1] == (('x', 'L'), ('y', 'RGB')) and calls == ['joint']
    assert [item for item in ds] == [(('x', 'L'), ('y', 'RGB'))] * 4


def test_coco_yields_mosaics_tuple_through_transform(tmp_path):
    folder = str(tmp_path / 'coco')
    columns = {'img': 'jpeg', 'img_id': 'int', 'htot': 'int', 'wtot': 'int', 'bbox_sizes': 'json',
               'bbox_labels': 'json'}  # Mosaic's converter writes pkl, unsafe to read
    with sluice.MDSWriter(out=folder, columns=columns, size_limit=1 << 16) as w:
        for i in range(3):
            w.write({'img': Image.fromarray(np.full((5, 7), 9 * i, np.uint8), 'L'),
                     'img_id': 100 + i, 'htot': 5, 'wtot': 7,
                     'bbox_sizes': [[0.1 * i, 0.2, 0.3, 0.4]], 'bbox_labels': [i]})
    img, img_id, size, boxes, labels = StreamingCOCO(local=folder, batch_size=1,
                                                     num_canonical_nodes=1)[2]
    assert (img.mode, img.size, img_id, size, boxes, labels) == (
        'RGB', (7, 5), 102, (5, 7), [[0.2, 0.2, 0.3, 0.4]], [2])

    def flip(image, hw, bbox_sizes, bbox_labels):
        return image.size, hw[::-1], len(bbox_sizes), [-v for v in bbox_labels]

    ds = StreamingCOCO(local=folder, batch_size=1, num_canonical_nodes=1, transform=flip)
    assert ds[1] == ((7, 5), 101, (7, 5), 1, [-1])
    assert [item[1] for item in ds] == [100, 101, 102]
