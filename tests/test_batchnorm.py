"""zoo.reestimate_batchnorm: the helper plugins' ``random`` variants use."""

from __future__ import annotations

import pytest

import zoo


@pytest.mark.stack
def test_statistics_become_those_of_the_samples_and_the_model_stays_in_eval_mode() -> None:
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(2, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.Linear(6, 3),
                                torch.nn.BatchNorm2d(4))
    samples = [(torch.rand(1, 2, 8, 8) * 5 + 3,) for _ in range(6)]
    assert zoo.reestimate_batchnorm(model, samples) == 2
    assert not model.training and not any(m.training for m in model.modules())
    with torch.no_grad():
        features = model[0](torch.cat([s[0] for s in samples]))
    norm = model[1]
    torch.testing.assert_close(norm.running_mean, features.mean(dim=(0, 2, 3)))
    torch.testing.assert_close(norm.running_var, features.var(dim=(0, 2, 3), unbiased=True))
    assert norm.momentum == 0.1  # restored after the cumulative average
    with torch.no_grad():
        normalised = model[1](features)
    assert float(normalised.mean().abs()) < 1e-5 and abs(float(normalised.std()) - 1) < 0.05
