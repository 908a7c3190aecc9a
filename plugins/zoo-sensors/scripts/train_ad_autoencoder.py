"""Train ``ad-autoencoder-spar``'s shipped weights, deterministically, and measure it against the
Mahalanobis baseline.

Trains the autoencoder on the features of subjects 1-8's windows of six exercises (all but ROW),
writes ``src/zoo_sensors/weights/ad_autoencoder_spar.safetensors`` and prints the ROC-AUC of its
reconstruction error on subjects 9-10's windows, ROW against the rest, beside the Mahalanobis
distance's on the same features. With ``--every-exercise`` it first does the same with each other
exercise held out (the features standardised by that run's training windows) and prints the
seven ROC-AUCs and their means. zoo's training helpers pin the numerics, so any x86_64 host with
the same stack, Intel or AMD, writes identical bytes.

    ZOO_SENSORS_DATA=DIR python plugins/zoo-sensors/scripts/train_ad_autoencoder.py [--every-exercise] [--out PATH]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import zoo

zoo.pin_numerics()  # before torch computes anything: the same kernels on every x86_64 host

import numpy as np  # noqa: E402
from zoo_sensors import ad_autoencoder, novelty, spar  # noqa: E402

RECIPE = zoo.TrainingRecipe(epochs=40, batch=32, learning_rate=3e-3, weight_decay=1e-4, seed=0)


def trained(novel: int, stats: tuple[Any, Any] | None) -> tuple[Any, float]:
    """The autoencoder trained without exercise ``novel``, and its float ROC-AUC on the held-out subjects."""
    import torch

    data = novelty.standardised(novel, stats)
    model = zoo.train_autoencoder(ad_autoencoder.new_network, torch.from_numpy(data["train"]), RECIPE,
                                  where=f"training {ad_autoencoder.NAME} without {spar.EXERCISES[novel]}")
    with torch.no_grad():
        held = torch.from_numpy(data["held_out"])
        errors = ((model(held) - held) ** 2).mean(dim=1).numpy()
    return model, float(zoo.roc_auc([(e,) for e in errors], novelty.held_out_labels(novel).tolist()))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", type=Path, default=ad_autoencoder.WEIGHTS_FILE)
    parser.add_argument("--every-exercise", action="store_true", help="hold out each of the other six too")
    args = parser.parse_args()
    started = time.perf_counter()
    ae, baseline = {}, {}
    for novel in range(len(spar.EXERCISES)):
        baseline[novel] = novelty.mahalanobis_auroc(novel)
        if args.every_exercise and novel != novelty.NOVEL:
            ae[novel] = trained(novel, novelty.training_statistics(novel))[1]
            print(f"{spar.EXERCISES[novel]} held out: autoencoder {ae[novel]:.3f}, Mahalanobis {baseline[novel]:.3f}",
                  flush=True)
    shipped_started = time.perf_counter()
    model, ae[novelty.NOVEL] = trained(novelty.NOVEL, None)
    seconds = time.perf_counter() - shipped_started
    note = (f"{ad_autoencoder.NAME} (autoencoder {ad_autoencoder.WIDTHS}); data: SPAR subjects 1-8 without "
            f"{spar.EXERCISES[novelty.NOVEL]}, {ad_autoencoder.identity('train')}; recipe: {RECIPE.describe()}")
    digest = zoo.save_weights(model, args.out, note)
    print(f"trained on {len(ad_autoencoder.load('train'))} windows in {seconds:.1f} s")
    print(f"{spar.EXERCISES[novelty.NOVEL]} held out: autoencoder {ae[novelty.NOVEL]:.3f}, "
          f"Mahalanobis {baseline[novelty.NOVEL]:.3f} (float ROC-AUC on subjects 9-10)")
    if args.every_exercise:
        print(f"mean over the 7 exercises: autoencoder {np.mean(list(ae.values())):.3f}, "
              f"Mahalanobis {np.mean(list(baseline.values())):.3f}")
    recorded = ("the recorded one" if digest == ad_autoencoder.WEIGHTS_SHA256
                else f"NOT the recorded {ad_autoencoder.WEIGHTS_SHA256!r}")
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes), sha256 {digest}: {recorded}; "
          f"{time.perf_counter() - started:.0f} s in all")
