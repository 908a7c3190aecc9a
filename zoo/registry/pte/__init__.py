"""The ``.pte`` as bytes: the program's structure read without ExecuTorch, and the Vela payload
of its Ethos-U delegates. Torch-free, and imports nothing of zoo's.
"""
