"""The C that computes a sensor input's window statistics (``zoo.SensorInput(from_window=True)``):
``<array>_features_input<i>(const float *raw, size_t steps, double *features)``.

Each statistic is numpy's on the window's float32 samples widened to double (``zoo.WINDOW_STATISTICS``),
step for step where numpy's steps are known: sums are numpy's pairwise sum (eight accumulators, blocks
of 128), the standard deviation the population one, percentiles numpy's linear interpolation (its
``_lerp``, which counts back from the upper value at or above a weight of 0.5), frequencies
``rfftfreq``'s ``k * (1 / (n * (1 / rate)))``, a bin's power ``hypot(re, im)²`` as ``np.abs(z) ** 2``.
The spectrum is a direct DFT of the centred window (numpy's is pocketfft's), so the power agrees to
rounding, not to the bit; so may ``hypot`` and ``log1p`` of another C library. Floating-point
contraction is off for these functions: a fused multiply-add would round otherwise than numpy.

``raw`` holds ``steps`` samples of every axis interleaved (``raw[t * AXES + a]``); fewer samples than
the window are padded after its end with zeros (raw units), more are cut after it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from zoo._window_features import WindowStatistic, parse_window_statistic

TWO_PI = 6.283185307179586


def statistics(features: Sequence[str], axes: Sequence[str]) -> list[WindowStatistic]:
    """The features' statistics; ValueError naming the first that is not one of zoo's."""
    out = []
    for name in features:
        parsed = parse_window_statistic(name, tuple(axes))
        if isinstance(parsed, str):
            raise ValueError(parsed)
        out.append(parsed)
    return out


def declaration(a: str, tensor: str) -> str:
    return f"void {a}_features_{tensor}(const float *raw, size_t steps, double *features);"


def render_features(a: str, tensor: str, sm: str, macros: Mapping[str, object]) -> str:
    """The function computing input ``tensor``'s features; ``sm`` is its ``<PREFIX>_INPUT<i>_SENSOR`` macro prefix."""
    s = f"{tensor}_sensor_"
    axes = [str(macros.get(f"{s}axis{k}")) for k in range(int(str(macros.get(s + "axes"))))]
    names = [str(macros.get(f"{s}feature{k}")) for k in range(int(str(macros.get(s + "channels"))))]
    rate = float(str(macros.get(s + "rate_hz")))
    parsed = statistics(names, axes)
    lines = []
    for axis in sorted({p.axis for p in parsed}):
        # Comments name the macros, not the names: a manifest's text never reaches the code.
        lines.append(f"    zoo_window_axis(raw, steps, {axis}, &w);  /* {sm}_AXIS{axis} */")
        lines += [f"    features[{k}] = {_expression(p)};  /* {sm}_FEATURE{k} */"
                  for k, p in enumerate(parsed) if p.axis == axis]
    return (
        f"void {a}_features_{tensor}(const float *raw, size_t steps, double *features)\n{{\n"
        f"    static double x[{sm}_WINDOW], work[{sm}_WINDOW], cosine[{sm}_WINDOW], sine[{sm}_WINDOW];\n"
        f"    static double power[{sm}_WINDOW / 2 + 1];\n"
        f"    struct zoo_window w = {{{sm}_WINDOW, {sm}_AXES, {rate.hex()}, x, work, cosine, sine, power, "
        "0.0, 0.0, 0.0, 0.0, 0.0};\n"
        "    zoo_twiddles(&w);\n"
        + "\n".join(lines) + "\n}\n"
    )


def _expression(p: WindowStatistic) -> str:
    if p.kind == "percentile":
        return f"zoo_percentile(&w, {p.a.hex()})"
    if p.kind == "dominant_hz":
        return "zoo_dominant_hz(&w)"
    if p.kind == "log_power":
        return f"log1p(zoo_band_power(&w, {p.a.hex()}, {p.b.hex()}))"
    return f"w.{p.kind}"


SUPPORT = (
    "/* The window statistics (zoo.WINDOW_STATISTICS): numpy's on the float32 samples widened to double. */\n"
    "#if defined(__GNUC__) && !defined(__clang__)\n#pragma GCC optimize(\"fp-contract=off\")\n"
    "#elif defined(__clang__)\n#pragma STDC FP_CONTRACT OFF\n#endif\n\n"
    "struct zoo_window {\n"
    "    size_t n, axes;\n    double rate;\n"
    "    double *x, *work, *cosine, *sine, *power;  /* x: the axis, sorted once its other statistics are taken */\n"
    "    double mean, std, min, max, mean_abs_diff;\n};\n\n"
    "/* numpy's pairwise sum of n doubles: eight accumulators in blocks of up to 128, halves above. */\n"
    "static double zoo_sum(const double *v, size_t n)\n{\n"
    "    if (n > 128) {\n        size_t half = n / 2;\n        half -= half % 8;\n"
    "        return zoo_sum(v, half) + zoo_sum(v + half, n - half);\n    }\n"
    "    double total = 0.0;\n    size_t i = 0;\n"
    "    if (n >= 8) {\n"
    "        double r[8];\n        for (size_t j = 0; j < 8; j++) {\n            r[j] = v[j];\n        }\n"
    "        for (i = 8; i + 8 <= n; i += 8) {\n"
    "            for (size_t j = 0; j < 8; j++) {\n                r[j] += v[i + j];\n            }\n        }\n"
    "        total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));\n    }\n"
    "    for (; i < n; i++) {\n        total += v[i];\n    }\n    return total;\n}\n\n"
    "/* cos and sin of 2 pi j / n, for the DFT's (k t mod n). */\n"
    "static inline void zoo_twiddles(struct zoo_window *w)\n{\n"
    "    for (size_t j = 0; j < w->n; j++) {\n"
    f"        const double angle = ({TWO_PI.hex()} * (double)j) / (double)w->n;\n"
    "        w->cosine[j] = cos(angle);\n        w->sine[j] = sin(angle);\n    }\n}\n\n"
    "/* Axis a's window into w->x, then its statistics; w->x ends sorted, w->power holds |rfft|^2. */\n"
    "static inline void zoo_window_axis(const float *raw, size_t steps, size_t a, struct zoo_window *w)\n{\n"
    "    const size_t n = w->n;\n"
    "    for (size_t t = 0; t < n; t++) {\n"
    "        w->x[t] = t < steps ? (double)raw[t * w->axes + a] : 0.0;\n    }\n"
    "    w->mean = zoo_sum(w->x, n) / (double)n;\n"
    "    w->min = w->x[0];\n    w->max = w->x[0];\n"
    "    for (size_t t = 0; t < n; t++) {\n"
    "        const double d = w->x[t] - w->mean;\n        w->work[t] = d * d;\n"
    "        w->min = w->x[t] < w->min ? w->x[t] : w->min;\n"
    "        w->max = w->x[t] > w->max ? w->x[t] : w->max;\n    }\n"
    "    w->std = sqrt(zoo_sum(w->work, n) / (double)n);\n"
    "    for (size_t t = 0; t + 1 < n; t++) {\n        w->work[t] = fabs(w->x[t + 1] - w->x[t]);\n    }\n"
    "    w->mean_abs_diff = n > 1 ? zoo_sum(w->work, n - 1) / (double)(n - 1) : 0.0;\n"
    "    for (size_t t = 0; t < n; t++) {\n        w->work[t] = w->x[t] - w->mean;\n    }\n"
    "    for (size_t k = 0; k <= n / 2; k++) {\n"
    "        double re = 0.0, im = 0.0;\n"
    "        for (size_t t = 0; t < n; t++) {\n"
    "            const size_t j = (k * t) % n;\n"
    "            re += w->work[t] * w->cosine[j];\n            im -= w->work[t] * w->sine[j];\n        }\n"
    "        const double magnitude = hypot(re, im);\n        w->power[k] = magnitude * magnitude;\n    }\n"
    "    for (size_t t = 1; t < n; t++) {  /* insertion sort, for the percentiles */\n"
    "        const double v = w->x[t];\n        size_t u = t;\n"
    "        for (; u > 0 && w->x[u - 1] > v; u--) {\n            w->x[u] = w->x[u - 1];\n        }\n"
    "        w->x[u] = v;\n    }\n}\n\n"
    "/* np.percentile(x, q): linear interpolation between the order statistics, as numpy's _lerp. */\n"
    "static inline double zoo_percentile(const struct zoo_window *w, double q)\n{\n"
    "    const double index = (double)(w->n - 1) * (q / 100.0);\n"
    "    if (index >= (double)(w->n - 1)) {\n        return w->x[w->n - 1];\n    }\n"
    "    const double below = floor(index), gamma = index - below;\n"
    "    const double lo = w->x[(size_t)below], hi = w->x[(size_t)below + 1], diff = hi - lo;\n"
    "    return gamma >= 0.5 ? hi - diff * (1.0 - gamma) : lo + diff * gamma;\n}\n\n"
    "/* rfftfreq's k * (1 / (n * (1 / rate))). */\n"
    "static inline double zoo_bin_hz(const struct zoo_window *w, size_t k)\n{\n"
    "    return (double)k * (1.0 / ((double)w->n * (1.0 / w->rate)));\n}\n\n"
    "static inline double zoo_dominant_hz(const struct zoo_window *w)\n{\n"
    "    size_t best = 1;\n"
    "    for (size_t k = 2; k <= w->n / 2; k++) {\n"
    "        if (w->power[k] > w->power[best]) {\n            best = k;\n        }\n    }\n"
    "    return zoo_bin_hz(w, best);\n}\n\n"
    "static inline double zoo_band_power(const struct zoo_window *w, double lo, double hi)\n{\n"
    "    size_t m = 0;\n"
    "    for (size_t k = 0; k <= w->n / 2; k++) {\n"
    "        const double hz = zoo_bin_hz(w, k);\n"
    "        if (hz >= lo && hz < hi) {\n            w->work[m++] = w->power[k];\n        }\n    }\n"
    "    return zoo_sum(w->work, m);\n}\n\n"
)
