class BatchFeature(dict):
    """Stand-in: Mosaic's dataloader only tests isinstance against it."""
