"""mosaicml-streaming's image-classification datasets (`streaming.vision`):
StreamingVisionDataset yields (x, y) from the columns 'x' (an image) and 'y'
(its label) through torchvision-style transforms, and StreamingCIFAR10 and
StreamingImageNet are it under their names. Their defaults are Mosaic's for
these classes (partition_algo 'orig', shuffle_algo 'py1s', shuffle blocks
of 1 << 18), so the sample order is Mosaic's. Decoding goes through get_item,
so iteration, a DataLoader and resumption all see the transformed pairs."""
import numpy as np

from sluice.dataset import StreamingDataset

__all__ = ['StreamingVisionDataset', 'StreamingCIFAR10', 'StreamingImageNet', 'to_tensor']

_EIGHT_BIT_MODES = {'L': 1, 'P': 1, 'RGB': 3, 'RGBA': 4, 'CMYK': 4, 'YCbCr': 3, 'LAB': 3,
                    'HSV': 3}


def to_tensor(image):
    """An 8-bit PIL image as torchvision's to_tensor makes it: float32, shape
    (channels, height, width), values / 255."""
    import torch
    if image.mode not in _EIGHT_BIT_MODES:
        raise ValueError(f'to_tensor: image mode {image.mode!r} is not an 8-bit mode '
                         f'({sorted(_EIGHT_BIT_MODES)}); pass a transform')
    pixels = np.asarray(image, dtype=np.uint8).reshape(image.size[1], image.size[0],
                                                       _EIGHT_BIT_MODES[image.mode])
    return torch.from_numpy(pixels.transpose(2, 0, 1).copy()).float().div(255)


class StandardTransform:
    """`transform` on the input (to_tensor without one) and
    `target_transform` on the label."""

    def __init__(self, transform=None, target_transform=None):
        self.transform = transform
        self.target_transform = target_transform

    def __call__(self, x, y):
        x = self.transform(x) if self.transform else to_tensor(x)
        if self.target_transform:
            y = self.target_transform(y)
        return x, y


class StreamingVisionDataset(StreamingDataset):
    """A StreamingDataset of (image, label) pairs. Give either `transforms`
    (called with both) or `transform` / `target_transform`."""

    def __init__(self, *, remote=None, local=None, split=None, download_retry=2,
                 download_timeout=60, validate_hash=None, keep_zip=False, epoch_size=None,
                 predownload=None, cache_limit=None, partition_algo='orig',
                 num_canonical_nodes=None, batch_size, shuffle=False, shuffle_algo='py1s',
                 shuffle_seed=9176, shuffle_block_size=1 << 18, transforms=None, transform=None,
                 target_transform=None):
        super().__init__(remote=remote, local=local, split=split, download_retry=download_retry,
                         download_timeout=download_timeout, validate_hash=validate_hash,
                         keep_zip=keep_zip, epoch_size=epoch_size, predownload=predownload,
                         cache_limit=cache_limit, partition_algo=partition_algo,
                         num_canonical_nodes=num_canonical_nodes, batch_size=batch_size,
                         shuffle=shuffle, shuffle_algo=shuffle_algo, shuffle_seed=shuffle_seed,
                         shuffle_block_size=shuffle_block_size)
        if transforms is not None and (transform is not None or target_transform is not None):
            raise ValueError('Only transforms or transform/target_transform can be passed as an '
                             'argument')
        self.transform = transform
        self.target_transform = target_transform
        self.transforms = transforms or StandardTransform(transform, target_transform)

    def get_item(self, idx):
        sample = super().get_item(idx)
        return self.transforms(sample['x'], sample['y'])


class StreamingCIFAR10(StreamingVisionDataset):
    """CIFAR-10 as Mosaic's convert script writes it ('x': image, 'y': label)."""


class StreamingImageNet(StreamingVisionDataset):
    """ImageNet as Mosaic's convert script writes it ('x': image, 'y': label)."""
