"""What firmware builds with: the C header and its macros, the ``.s`` that holds the
program, the memory plan and the method allocator's replay, the CPU kernels to link,
the I/O helpers, and the project that runs an artifact through ExecuTorch's runtime.
Torch-free: all of it runs on a hand-out."""
