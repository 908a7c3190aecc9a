"""The NPU targets: accelerators and boards (``targets``), Vela's own configuration, the
flags and reports Vela gives, and whether a program fits a board's memory. Torch-free.
"""
