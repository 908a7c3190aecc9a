"""Measures silero-vad's figures for docs/vad.md and the spec's declared reference.

On the held-out clips' steps (zoo_audio/data/vad/clips.npz):
- float: step-level ROC-AUC and F1 at 0.5, the state carried over each clip from zero;
- against silero-vad's own TorchScript model (if silero-vad is installed): the largest
  difference in probability over every clip, and the same for the wheel's safetensors file;
- int8: the network quantized as zoo quantizes it for Ethos-U (EthosUQuantizer, symmetric
  int8, calibrated on the calibration steps), run in torch (fake-quant) two ways: each step
  from float's state (what `zoo fetch --verify` judges) and with its own state carried over
  the clip (what firmware does).

Run: PYTHONPATH=.:plugins/zoo-audio/src python plugins/zoo-audio/scripts/measure_vad.py
"""

from __future__ import annotations

import importlib.util
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from zoo_audio import silero_net as net
from zoo_audio import vad

import zoo
from zoo.registry.request import reproducible


def scores(probs: list[Any], labels: list[Any]) -> dict[str, float]:
    outputs = [[np.asarray([p])] for p in np.concatenate(probs)]
    truths = [int(t) for t in np.concatenate(labels)]
    return {"roc_auc": round(zoo.roc_auc(outputs, truths), 4), "f1": round(zoo.f1_at(0.5)(outputs, truths), 4)}


def carried(step: Any, clip: Any) -> Any:
    """Probabilities of ``step(audio, h, c) -> (p, h, c)`` over a clip, its own state carried."""
    h, c = net.zero_state()
    out = []
    with torch.no_grad():
        for row in net.windows(clip):
            p, h, c = step(torch.from_numpy(row).reshape(1, net.WINDOW), h, c)
            out.append(float(p.reshape(())))
    return np.asarray(out)


def silero_reference(audio: Any) -> dict[str, float] | None:
    found = importlib.util.find_spec("silero_vad")
    if found is None:
        return None
    import silero_vad  # type: ignore[import-not-found,unused-ignore]
    from safetensors.torch import load_file

    data = Path(next(iter(found.submodule_search_locations or []))) / "data"
    jit = silero_vad.load_silero_vad()
    ours = vad._build(vad.WEIGHTS)
    wheel = net.network_class()()
    wheel.load_state_dict(load_file(str(data / "silero_vad_16k.safetensors")))
    worst = {"ours": 0.0, "wheel_safetensors": 0.0}
    for clip in audio:
        jit.reset_states()
        with torch.no_grad():
            want = np.asarray([float(jit(torch.from_numpy(r[net.CONTEXT:].copy()).reshape(1, net.CHUNK), 16000))
                               for r in net.windows(clip)])
        worst["ours"] = max(worst["ours"], float(np.abs(carried(ours, clip) - want).max()))
        worst["wheel_safetensors"] = max(worst["wheel_safetensors"],
                                         float(np.abs(carried(wheel.eval(), clip) - want).max()))
    return worst


def fake_quant(target: str) -> Any:
    from executorch.backends.arm.ethosu import EthosUCompileSpec
    from executorch.backends.arm.quantizer import EthosUQuantizer, get_symmetric_quantization_config
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    calibration = vad._calibration()
    graph = torch.export.export(vad._build(vad.WEIGHTS), calibration[0]).module(check_guards=False)
    quantizer = EthosUQuantizer(EthosUCompileSpec(target))
    quantizer.set_global(get_symmetric_quantization_config())
    prepared = prepare_pt2e(graph, quantizer)
    for sample in calibration:
        prepared(*sample)
    return convert_pt2e(prepared)


def main() -> None:
    reproducible.pin()
    started = time.perf_counter()
    audio, labels = vad.clips("evaluation")
    model = vad._build(vad.WEIGHTS)
    result: dict[str, Any] = {"evaluation_steps": int(labels.size), "speech_steps": int(labels.sum())}
    result["float"] = scores([net.run_clip(model, clip)[0] for clip in audio], list(labels))
    result["silero_vad_jit_max_abs_diff"] = silero_reference(audio)
    steps = vad._evaluation()
    for target in ("ethos-u55-128", "ethos-u85-256"):
        quantized = fake_quant(target)
        with torch.no_grad():
            from_float = [float(quantized(*sample)[0].reshape(())) for sample, _ in steps]
        result[f"fake_quant {target}"] = {
            "from_float_state": scores([np.asarray(from_float)], [np.asarray([t for _, t in steps])]),
            "own_state_carried": scores([carried(quantized, clip) for clip in audio], list(labels)),
        }
    result["seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
