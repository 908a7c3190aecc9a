"""The ``.pte`` as bytes: the program's structure read without ExecuTorch, the Vela payload
of its Ethos-U delegates, one method's layout, and ``program.Program``, all of it parsed once
and passed along. Torch-free, and imports nothing of zoo's.
"""
