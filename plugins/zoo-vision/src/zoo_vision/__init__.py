"""zoo-vision: vision models for zoo beyond classification (wake words, detection,
segmentation, transformers).

Importing this package is cheap: torch, torchvision and timm load only when a model is built.
"""

__version__ = "0.1.0"
