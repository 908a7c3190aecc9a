"""The checks that run on every hand-out and on everything received, without torch: the
``.pte``'s structure, the C header, the I/O boundary, the labels, and the verification
record. Each reports a ``zoo.registry.checks.Check``.
"""
