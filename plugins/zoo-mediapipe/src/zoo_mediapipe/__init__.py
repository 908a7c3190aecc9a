"""zoo-mediapipe: MediaPipe 0.10.14's face, segmentation, hand and pose networks with their real
weights, read from the wheel's ``.tflite`` files by ``zoo.read_tflite``.

Importing this package is cheap: torch and numpy load only when a model is built or evaluated.
"""

__version__ = "0.1.0"
