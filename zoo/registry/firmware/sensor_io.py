"""A sensor input's declaration in C: the header's ``INPUT<i>_SENSOR_*`` macros and the
``<array>_normalise_input<i>`` helper of ``<stem>_io.c``.

The macros come from the input's JSON in the build key (``zoo.SensorInput.to_json``), so a
manifest's check derives them again. Per input ``i`` that declares a sensor:

- ``INPUT<i>_SENSOR_WINDOW``, ``_RATE_HZ``, ``_NORMALISATION`` (``"per-channel"``, ``"per-window"`` or
  ``"none"``), ``_AXES`` and ``_AXIS<k>`` (a name), ``_AXIS<k>_UNIT`` where declared;
- ``_CHANNELS`` and ``_STEPS``: the network input holds channels × steps values (the axes × the
  window, or ``_FEATURE<k>`` names × 1 when features are computed from the window);
- ``_FROM_WINDOW`` (1) where zoo computes the features (``zoo.WINDOW_STATISTICS``) from the raw window:
  ``<array>_features_input<i>`` (``window_features``), which the normalising helper calls;
- per channel, ``_MEAN<k>`` and ``_STD<k>`` (float literals, to read) and ``_MEAN<k>_BITS`` and
  ``_STD<k>_BITS`` (the exact IEEE-754 double, which the helper uses).

``<array>_normalise_input<i>(const float *raw, size_t steps, <array>_input<i>_t *q)`` takes
``steps`` samples of every channel interleaved (``raw[t * CHANNELS + c]``, as a sensor's FIFO gives
them), normalises each in double and rounds it to float32 once (numpy's float64 arithmetic, then
``astype(float32)``), then quantizes it as ``<array>_quantize_input<i>`` does, into the program's
memory order. ``per-window`` statistics are numpy's: a pairwise sum (8 accumulators, blocks of 128),
the population standard deviation, floored at ``zoo.WINDOW_STD_FLOOR``. Fewer steps than the window:
the rest are a normalised zero; more: the first ``WINDOW`` are kept (statistics run over all).
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from typing import Any

from zoo.registry.firmware import window_features

Macros = dict[str, str | int | float | None]

WINDOW_STD_FLOOR = 1e-12
"""zoo._sensor's: the firmware package may not import it (it is the spec's layer), so a test
holds the two equal."""
NORMALISATIONS = ("per-channel", "per-window", "none")


def float64_bits(value: float) -> int:
    return int.from_bytes(struct.pack("<d", value), "little")


def sensor_macros(inputs: Sequence[Mapping[str, Any]], elements: Mapping[int, object]) -> Macros:
    """The macros of every input that declares a sensor (its JSON's ``sensor``); ``elements[i]`` is
    the program's element count of input ``i``. ValueError if a declaration does not fit it."""
    out: Macros = {}
    for i, record in enumerate(inputs):
        sensor = record.get("sensor") if isinstance(record, Mapping) else None
        if sensor is None:
            continue
        if not isinstance(sensor, Mapping):
            raise ValueError(f"input {i}'s sensor declaration is not an object")
        try:
            out.update(_one(f"input{i}_sensor_", sensor, elements.get(i)))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"input {i}'s sensor declaration: {exc}") from None
    return out


def _one(p: str, s: Mapping[str, Any], elements: object) -> Macros:
    axes, units, features = list(s["axes"]), list(s.get("units") or []), list(s.get("features") or [])
    mean, std = [float(v) for v in s.get("mean") or []], [float(v) for v in s.get("std") or []]
    window, normalisation = int(s["window"]), str(s["normalisation"])
    channels = features or axes
    steps = 1 if features else window
    from_window = s.get("from_window", False)
    if from_window is not False and (from_window is not True or not features):
        raise ValueError("from_window must be true, with features, or absent")
    if from_window:
        window_features.statistics(features, axes)
    if normalisation not in NORMALISATIONS:
        raise ValueError(f"normalisation {normalisation!r} is not one of {', '.join(NORMALISATIONS)}")
    if normalisation == "per-channel" and (len(mean) != len(channels) or len(std) != len(channels)):
        raise ValueError(f"per-channel normalisation needs {len(channels)} means and stds")
    if any(not v > 0 for v in std):
        raise ValueError("a std is not positive")
    if elements != len(channels) * steps:
        raise ValueError(f"{len(channels)} channels × {steps} steps is not the program's {elements} values")
    out: Macros = {p + "window": window, p + "rate_hz": float(s["rate_hz"]), p + "normalisation": normalisation,
                   p + "axes": len(axes)}
    for k, name in enumerate(axes):
        out[f"{p}axis{k}"] = str(name)
        if units:
            out[f"{p}axis{k}_unit"] = str(units[k])
    out[p + "channels"], out[p + "steps"] = len(channels), steps
    if from_window:
        out[p + "from_window"] = 1
    out.update({f"{p}feature{k}": str(name) for k, name in enumerate(features)})
    for k, (m, d) in enumerate(zip(mean, std, strict=True)):
        out.update({f"{p}mean{k}": m, f"{p}mean{k}_bits": float64_bits(m),
                    f"{p}std{k}": d, f"{p}std{k}_bits": float64_bits(d)})
    return out


def has_sensor(macros: Mapping[str, object], i: int) -> bool:
    return isinstance(macros.get(f"input{i}_sensor_window"), int)


def from_window(macros: Mapping[str, object], i: int) -> bool:
    return macros.get(f"input{i}_sensor_from_window") == 1


def features_declarations(a: str, tensor: str, macros: Mapping[str, object], i: int) -> list[str]:
    return [window_features.declaration(a, tensor)] if from_window(macros, i) else []


def normalise_declaration(a: str, tensor: str) -> str:
    return f"void {a}_normalise_{tensor}(const float *raw, size_t steps, {a}_{tensor}_t *q);"


def sensor_comment(p: str, tensor: str, macros: Mapping[str, object]) -> str:
    """The header's words on the helper, naming the axes, the features and the normalisation."""
    s, m = f"{tensor}_sensor_", f"{p}_{tensor.upper()}_SENSOR"
    # A manifest's axis names go into a comment: one cannot open or close it (nor become code).
    axes = ", ".join(str(macros.get(f"{s}axis{k}")).replace("*/", "* /").replace("/*", "/ *")
                     for k in range(int(str(macros.get(f"{s}axes")))))
    features = macros.get(f"{s}feature0") is not None
    computed = macros.get(s + "from_window") == 1
    taken = (f"raw[t * {m}_AXES + a] for `steps` samples (interleaved, as a FIFO gives them),\n"
             f"   computes its {m}_CHANNELS features ({m}_FEATURE<k>) from them as features_{tensor}"
             if computed else
             f"its {m}_CHANNELS features ({m}_FEATURE<k>), which firmware computes from the window, in raw[c]"
             if features else "raw[t * CHANNELS + c] for `steps` samples (interleaved, as a FIFO gives them)")
    return (f"/* {tensor} is a sensor's window: {m}_WINDOW samples at {m}_RATE_HZ Hz of the axes {axes}.\n"
            f"   normalise_{tensor} takes {taken},\n"
            f"   normalises them ({macros.get(s + 'normalisation')}) in double, rounds each to float32 once and "
            f"quantizes it as quantize_{tensor}\n"
            "   does, into the program's memory order. Fewer steps than the window: the rest is a normalised zero. */")


def render_normalise(a: str, tensor: str, m: str, dtype: str, macros: Mapping[str, object]) -> str:
    """The helper's definition; ``m`` is the tensor's macro prefix (``MODEL_PTE_INPUT0``)."""
    s, sm = f"{tensor}_sensor_", f"{m}_SENSOR"
    channels = int(str(macros.get(s + "channels")))  # ValueError, not KeyError, for a manifest without it
    normalisation = str(macros.get(s + "normalisation"))
    if normalisation not in NORMALISATIONS:
        raise ValueError(f"{tensor}'s sensor normalisation {normalisation!r} is not one of {', '.join(NORMALISATIONS)}")
    computed = macros.get(s + "from_window") == 1
    if computed and normalisation == "per-window":
        raise ValueError(f"{tensor}'s features are computed from the window: per-window normalisation takes raw samples")
    channels_last = macros.get(f"{tensor}_layout") == "nhwc"
    index = "t * channels + c" if channels_last else "c * window + t"
    if dtype == "float32":
        store = "        q[index] = v;\n"
    else:
        store = (f"        float r = rintf(v * inv_scale) + zero_point;\n"
                 "        if (r != r) {\n            r = zero_point;\n"
                 f"        }} else if (r < (float){m}_QMIN) {{\n            r = (float){m}_QMIN;\n"
                 f"        }} else if (r > (float){m}_QMAX) {{\n            r = (float){m}_QMAX;\n        }}\n"
                 f"        q[index] = ({a}_{tensor}_t)r;\n")
    constants = "" if dtype == "float32" else (
        f"    const float inv_scale = zoo_float_of_bits({m}_INV_SCALE_BITS);\n"
        f"    const float zero_point = (float){m}_ZERO_POINT;\n")
    if normalisation == "per-channel":
        for what in ("mean", "std"):
            constants += (f"    const double {what}[{channels}] = {{\n"
                          + "".join(f"        zoo_double_of_bits({sm}_{what.upper()}{k}_BITS),\n" for k in range(channels))
                          + "    };\n")
    statistics = {
        "per-channel": "        const double centre = mean[c], spread = std[c];\n",
        "per-window": ("        const double centre = zoo_pairwise(raw + c, channels, steps, 0.0, 0) / (double)steps;\n"
                       "        const double variance = zoo_pairwise(raw + c, channels, steps, centre, 1) / (double)steps;\n"
                       "        double spread = sqrt(variance);\n"
                       f"        if ({WINDOW_STD_FLOOR!r} > spread) {{  /* max(std, floor), as Python's max */\n"
                       f"            spread = {WINDOW_STD_FLOOR!r};\n        }}\n"),
        "none": "",
    }[normalisation]
    value = "(float)raw[t * channels + c]" if normalisation == "none" else \
        "(float)(((double)raw[t * channels + c] - centre) / spread)"
    given = f"t < steps ? {value} : 0.0f"
    if computed:  # one step of features, in double: rounded to float32 once, after the normalisation
        value = "(float)f[c]" if normalisation == "none" else "(float)((f[c] - centre) / spread)"
        given = value
        constants = (f"    static double f[{sm}_CHANNELS];\n    {a}_features_{tensor}(raw, steps, f);\n"
                     + constants)
    return (
        (window_features.render_features(a, tensor, sm, macros) + "\n" if computed else "")
        + f"void {a}_normalise_{tensor}(const float *raw, size_t steps, {a}_{tensor}_t *q)\n{{\n"
        f"    const size_t channels = {sm}_CHANNELS, window = {sm}_STEPS;\n"
        + constants
        + "    for (size_t c = 0; c < channels; c++) {\n"
        + statistics
        + "        for (size_t t = 0; t < window; t++) {\n"
        f"            const float v = {given};\n"
        f"            const size_t index = {index};\n"
        + "".join("    " + line + "\n" for line in store.rstrip("\n").split("\n"))
        + "        }\n    }\n}\n"
    )


PAIRWISE = (
    "/* numpy's pairwise sum of n values (raw[i * stride], or its squared distance from centre): eight\n"
    "   accumulators in blocks of up to 128, halves above, so a window's statistics are numpy's to the bit. */\n"
    "static double zoo_pairwise(const float *raw, size_t stride, size_t n, double centre, int squared)\n{\n"
    "    if (n > 128) {\n"
    "        size_t half = n / 2;\n        half -= half % 8;\n"
    "        return zoo_pairwise(raw, stride, half, centre, squared)\n"
    "               + zoo_pairwise(raw + half * stride, stride, n - half, centre, squared);\n    }\n"
    "    double r[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};\n"
    "    double total = 0.0;\n"
    "    size_t i = 0;\n"
    "    if (n >= 8) {\n"
    "        for (; i + 8 <= n; i += 8) {\n"
    "            for (size_t j = 0; j < 8; j++) {\n"
    "                double x = (double)raw[(i + j) * stride];\n"
    "                if (squared) {\n                    x = (x - centre) * (x - centre);\n                }\n"
    "                r[j] = i == 0 ? x : r[j] + x;\n"
    "            }\n        }\n"
    "        total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));\n    }\n"
    "    for (; i < n; i++) {\n"
    "        double x = (double)raw[i * stride];\n"
    "        if (squared) {\n            x = (x - centre) * (x - centre);\n        }\n"
    "        total += x;\n    }\n"
    "    return total;\n}\n\n"
)

DOUBLE_OF_BITS = (
    "static inline double zoo_double_of_bits(uint64_t bits)\n{\n"
    "    double d;\n    memcpy(&d, &bits, sizeof d);\n    return d;\n}\n\n"
)


def support(macros: Mapping[str, object], inputs: int) -> str:
    """The static functions the helpers of ``inputs`` inputs need, once per source."""
    kinds = {str(macros.get(f"input{i}_sensor_normalisation")) for i in range(inputs) if has_sensor(macros, i)}
    computed = any(from_window(macros, i) for i in range(inputs))
    return ((DOUBLE_OF_BITS if "per-channel" in kinds else "") + (PAIRWISE if "per-window" in kinds else "")
            + (window_features.SUPPORT if computed else ""))
