"""A model file (aot_arm_compiler style) that the U55 must split: its 4x4/stride-4
average pooling is too large for the NPU, so it runs on the CPU between two
NPU partitions. Shared by the fetch and verification tests."""

from __future__ import annotations

import textwrap

SPLIT_MODEL = textwrap.dedent('''
    """A conv net whose 4x4/stride-4 pooling is too large for the U55: two NPU partitions."""
    import torch

    class Split(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.pool = torch.nn.AvgPool2d(4, stride=4)
            self.conv2 = torch.nn.Conv2d(8, 16, 3, stride=2, padding=1)
            self.fc = torch.nn.Linear(16 * 2 * 2, 10)

        def forward(self, x):
            x = torch.relu(self.conv1(x))
            x = torch.relu(self.conv2(self.pool(x)))
            return self.fc(x.flatten(1))

    torch.manual_seed(0)
    ModelUnderTest = Split()
    ModelInputs = (torch.rand(1, 3, 16, 16),)
    CalibrationData = [(torch.rand(1, 3, 16, 16),) for _ in range(4)]
''')
