"""mosaicml-streaming's image datasets (`streaming.vision`):
StreamingVisionDataset yields (x, y) from the columns 'x' (an image) and 'y'
(its label) through torchvision-style transforms, and StreamingCIFAR10 and
StreamingImageNet are it under their names; StreamingADE20K (segmentation)
and StreamingCOCO (detection) yield their own tuples. Their defaults are
Mosaic's for these classes (see sluice.builtin_dataset), so the sample order
is Mosaic's. Decoding goes through get_item, so iteration, a DataLoader and
resumption all see the transformed samples."""
import numpy as np

from sluice.builtin_dataset import BuiltinDataset

__all__ = ['StreamingVisionDataset', 'StreamingADE20K', 'StreamingCIFAR10', 'StreamingCOCO',
           'StreamingImageNet', 'to_tensor']

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


class StreamingVisionDataset(BuiltinDataset):
    """A StreamingDataset of (image, label) pairs. Give either `transforms`
    (called with both) or `transform` / `target_transform`."""

    def __init__(self, *, batch_size, transforms=None, transform=None, target_transform=None,
                 **kwargs):
        super().__init__(batch_size=batch_size, **kwargs)
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


class StreamingADE20K(BuiltinDataset):
    """ADE20K segmentation as Mosaic's convert script writes it ('x': image,
    'y': annotation image): (x, y) after `joint_transform` on the pair, then
    `transform` on x and `target_transform` on y, each when given."""

    def __init__(self, *, joint_transform=None, transform=None, target_transform=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.joint_transform = joint_transform
        self.transform = transform
        self.target_transform = target_transform

    def get_item(self, idx):
        sample = super().get_item(idx)
        x, y = sample['x'], sample['y']
        if self.joint_transform:
            x, y = self.joint_transform((x, y))
        if self.transform:
            x = self.transform(x)
        if self.target_transform:
            y = self.target_transform(y)
        return x, y


class StreamingCOCO(BuiltinDataset):
    """COCO detection as Mosaic's convert script writes it: (RGB image,
    img_id, (height, width), bbox_sizes, bbox_labels), after `transform`
    (called with the image, the size pair, the boxes and the labels) when
    given."""

    def __init__(self, *, transform=None, **kwargs):
        super().__init__(**kwargs)
        self.transform = transform

    def get_item(self, idx):
        sample = super().get_item(idx)
        img = sample['img'].convert('RGB')
        size = (sample['htot'], sample['wtot'])
        boxes, labels = sample['bbox_sizes'], sample['bbox_labels']
        if self.transform:
            img, size, boxes, labels = self.transform(img, size, boxes, labels)
        return img, sample['img_id'], size, boxes, labels
