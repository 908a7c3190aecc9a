"""A model that comes as a file: ``--model-file`` (a ``.py`` in ``aot_arm_compiler``'s style,
an ``.onnx`` graph or a ``.tflite`` flatbuffer), and pretrained checkpoints from torch's hub cache for plugins.
torch and onnx load inside functions.
"""
