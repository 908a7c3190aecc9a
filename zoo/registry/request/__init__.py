"""What one build is asked to be and what its key covers: the request and its key, the
precision, the I/O boundary, the float numerics mode and the model's code. Torch-free.
"""
