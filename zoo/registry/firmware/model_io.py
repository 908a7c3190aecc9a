"""The I/O helpers beside an artifact's header: ``<stem>_io.h`` and ``<stem>_io.c``.

For each input, ``<array>_quantize_input<i>(const float *x, <array>_input<i>_t *q)``
turns ``<ARRAY>_INPUT<i>_ELEMENTS`` floats into what the program takes; for each
output, ``<array>_dequantize_output<i>`` turns what it gives back into floats and
``<array>_argmax_output<i>`` finds the largest (the first of equals, as torch's
argmax; for a float output a NaN counts as the largest).

The rule is torch's ``quantized_decomposed`` one, which the host's numerical
check uses (``io_boundary.ROUNDING``, which the manifest records), step for step in float32:

- quantize: ``clamp(rint(x * inv_scale) + zero_point, qmin, qmax)``, where
  ``inv_scale`` is ``1 / scale`` computed in double and rounded to float32 (torch
  multiplies by it; dividing by the float32 scale gives another integer for a
  few values in a million), and ``rint`` rounds half to even;
- dequantize: ``(q - zero_point) * scale``, ``scale`` rounded to float32.

The constants come from the header's ``*_BITS`` macros, so the compiler's reading of
a decimal literal cannot move them. A NaN input becomes the zero point (torch's
result for it is undefined). Float I/O needs no conversion: the helpers copy, so
firmware calls the same functions whatever ``--io`` the artifact was built with.

For an input that declares a sensor (``zoo.SensorInput``: the ``INPUT<i>_SENSOR_*`` macros),
``<array>_normalise_input<i>(const float *raw, size_t steps, <array>_input<i>_t *q)`` takes the
sensor's raw interleaved samples and does the declared normalisation and the quantization in one
pass (``sensor_io``).

For a pitch estimator (macros ``task`` = ``"pitch"`` and the ``pitch_*`` constants that
:func:`pitch_macros` gives, which the model header defines), the header also defines ``<array>_pitch_hz(const float
*salience, float *confidence)``: the weighted argmax of ``zoo.decode_pitch`` in float32,
to call on the dequantized salience of output 0.

Rendered from the manifest's header macros alone, so the files are checked the
way the ``.s`` is: rendered again and compared byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from zoo.registry.firmware import sensor_io
from zoo.registry.firmware.c_header import HeaderOptions

C_TYPES = {"float32": "float", "int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t"}
"""The dtypes the helpers serve; a tensor of another dtype gets none (its comment says so)."""

Macros = Mapping[str, str | int | float | None]


def io_names(header_name: str) -> tuple[str, str]:
    """``mnist_u55-128_io.h`` and ``mnist_u55-128_io.c`` beside ``mnist_u55-128.h``."""
    stem = header_name[:-2] if header_name.endswith(".h") else header_name
    return f"{stem}_io.h", f"{stem}_io.c"


def has_io(macros: Macros) -> bool:
    """Whether the macros describe the program's inputs and outputs (every build since ``--io``)."""
    return isinstance(macros.get("inputs"), int) and isinstance(macros.get("outputs"), int)


def render_io(header_name: str, options: HeaderOptions, macros: Macros, *, c_only: bool = False) -> tuple[str, str]:
    """The helpers' header and source for the artifact whose header is ``header_name``.
    ValueError if the macros lack what a helper needs (an integer tensor without its exact
    constants, a scale that is not positive). The header declares the functions
    ``extern "C"`` for C++ (ExecuTorch's firmware is C++); ``c_only`` renders it as zoo
    did before that, only to check artifacts made then."""
    if not has_io(macros):
        raise ValueError("the header's macros do not describe the program's inputs and outputs")
    a, p = options.array, options.prefix
    io_h, _ = io_names(header_name)
    guard = f"{p}_IO_H_"
    decls: list[str] = []
    defs: list[str] = []
    for side in ("input", "output"):
        for i in range(int(macros[f"{side}s"] or 0)):
            tensor = f"{side}{i}"
            dtype = str(macros.get(f"{tensor}_dtype"))
            ctype = C_TYPES.get(dtype)
            if ctype is None:
                decls.append(f"/* {tensor}: {dtype}, which the helpers do not convert. */")
                continue
            m = f"{p}_{tensor.upper()}"
            decls.append(f"typedef {ctype} {a}_{tensor}_t;")
            if side == "input":
                decls.append(f"void {a}_quantize_{tensor}(const float *x, {a}_{tensor}_t *q);")
                defs.append(_quantize(a, tensor, m, dtype, macros))
                if sensor_io.has_sensor(macros, i):
                    decls += [sensor_io.sensor_comment(p, tensor, macros),
                              *sensor_io.features_declarations(a, tensor, macros, i),
                              sensor_io.normalise_declaration(a, tensor)]
                    defs.append(sensor_io.render_normalise(a, tensor, m, dtype, macros))
            else:
                decls.append(f"void {a}_dequantize_{tensor}(const {a}_{tensor}_t *q, float *x);")
                decls.append(f"size_t {a}_argmax_{tensor}(const {a}_{tensor}_t *q);")
                defs.append(_dequantize(a, tensor, m, dtype, macros))
                defs.append(_argmax(a, tensor, m, dtype))
    pitch = _pitch(a, p, macros)
    header = (
        "/* Generated by zoo. Do not edit. */\n"
        f"#ifndef {guard}\n#define {guard}\n\n"
        + ("#include <math.h>\n" if pitch else "")
        + "#include <stddef.h>\n#include <stdint.h>\n\n"
        f'#include "{header_name}"\n\n'
        f"/* Each function reads or writes {p}_<TENSOR>_ELEMENTS values. Inputs: q = clamp(rint(x * inv_scale)\n"
        "   + zero_point, qmin, qmax) in float32, inv_scale = float32(1 / scale), rint rounding half to even;\n"
        "   outputs: x = (q - zero_point) * scale. Float I/O: a copy. */\n"
        + ("" if c_only else '#ifdef __cplusplus\nextern "C" {\n#endif\n\n')
        + "\n".join(decls) + "\n\n"
        + ("" if c_only else "#ifdef __cplusplus\n}\n#endif\n\n")
        + pitch
        + f"#endif /* {guard} */\n"
    )
    source = (
        "/* Generated by zoo. Do not edit. */\n"
        "#include <math.h>\n#include <string.h>\n\n"
        f'#include "{io_h}"\n\n'
        "static inline float zoo_float_of_bits(uint32_t bits)\n{\n"
        "    float f;\n    memcpy(&f, &bits, sizeof f);\n    return f;\n}\n\n"
        + sensor_io.support(macros, int(macros["inputs"] or 0))
        + "\n".join(defs)
    )
    return header, source


def _integer(macros: Macros, tensor: str, names: tuple[str, ...]) -> None:
    missing = [n for n in names if not isinstance(macros.get(f"{tensor}_{n}"), (int, float))]
    if missing:
        raise ValueError(f"{tensor} is an integer tensor without the macros {', '.join(missing)}")
    scale = macros.get(f"{tensor}_scale")
    if not isinstance(scale, (int, float)) or scale <= 0:
        raise ValueError(f"{tensor}'s scale {scale!r} is not positive")


def _quantize(a: str, tensor: str, m: str, dtype: str, macros: Macros) -> str:
    head = f"void {a}_quantize_{tensor}(const float *x, {a}_{tensor}_t *q)\n{{\n"
    if dtype == "float32":
        return head + f"    memcpy(q, x, {m}_BYTES);\n}}\n"
    _integer(macros, tensor, ("scale", "inv_scale_bits", "zero_point", "qmin", "qmax"))
    return head + (
        f"    const float inv_scale = zoo_float_of_bits({m}_INV_SCALE_BITS);\n"
        f"    const float zero_point = (float){m}_ZERO_POINT;\n"
        f"    for (size_t i = 0; i < {m}_ELEMENTS; i++) {{\n"
        "        float v = rintf(x[i] * inv_scale) + zero_point;\n"
        "        if (v != v) {\n            v = zero_point;\n"
        f"        }} else if (v < (float){m}_QMIN) {{\n            v = (float){m}_QMIN;\n"
        f"        }} else if (v > (float){m}_QMAX) {{\n            v = (float){m}_QMAX;\n        }}\n"
        f"        q[i] = ({a}_{tensor}_t)v;\n"
        "    }\n}\n"
    )


def _dequantize(a: str, tensor: str, m: str, dtype: str, macros: Macros) -> str:
    head = f"void {a}_dequantize_{tensor}(const {a}_{tensor}_t *q, float *x)\n{{\n"
    if dtype == "float32":
        return head + f"    memcpy(x, q, {m}_BYTES);\n}}\n"
    _integer(macros, tensor, ("scale", "scale_bits", "zero_point"))
    return head + (
        f"    const float scale = zoo_float_of_bits({m}_SCALE_BITS);\n"
        f"    for (size_t i = 0; i < {m}_ELEMENTS; i++) {{\n"
        f"        x[i] = ((float)q[i] - (float){m}_ZERO_POINT) * scale;\n"
        "    }\n}\n"
    )


def _argmax(a: str, tensor: str, m: str, dtype: str) -> str:
    # Integer outputs compare the integers: a positive scale keeps their order.
    better = "q[i] > q[best] || q[i] != q[i]" if dtype == "float32" else "q[i] > q[best]"
    stop = "        if (q[best] != q[best]) {\n            break;\n        }\n" if dtype == "float32" else ""
    return (
        f"size_t {a}_argmax_{tensor}(const {a}_{tensor}_t *q)\n{{\n"
        "    size_t best = 0;\n"
        f"    for (size_t i = 1; i < {m}_ELEMENTS; i++) {{\n"
        f"{stop}"
        f"        if ({better}) {{\n            best = i;\n        }}\n"
        "    }\n    return best;\n}\n"
    )


PITCH_MACROS = ("pitch_bins", "pitch_cents_per_bin", "pitch_cents_offset", "pitch_window")


def pitch_macros(task: str, metric_fns: Iterable[object]) -> Macros:
    """The macros that ask :func:`render_io` for the pitch helper: for a model whose task is
    ``"pitch"``, the bins of the first metric function that carries them (``zoo.raw_pitch_accuracy``).
    Empty for any other model."""
    if task != "pitch":
        return {}
    for fn in metric_fns:
        scale = getattr(fn, "scale", None)
        if scale is not None:
            return {"task": task, "pitch_bins": int(scale.bins), "pitch_cents_per_bin": float(scale.cents_per_bin),
                    "pitch_cents_offset": float(scale.cents_offset), "pitch_window": int(scale.window)}
    return {}


def _pitch(a: str, p: str, macros: Macros) -> str:
    """The weighted-argmax decoder, ``static inline`` in the header; empty unless the task is pitch."""
    if macros.get("task") != "pitch":
        return ""
    bins, per_bin, offset, window = (macros.get(k) for k in PITCH_MACROS)
    if not (isinstance(bins, int) and isinstance(window, int) and isinstance(per_bin, (int, float))
            and isinstance(offset, (int, float)) and bins >= 2 and window >= 0 and per_bin > 0):
        raise ValueError(f"a pitch model needs the macros {', '.join(PITCH_MACROS)} (bins ≥ 2, window ≥ 0, "
                         f"cents per bin > 0); got {bins!r}, {per_bin!r}, {offset!r}, {window!r}")
    elements = macros.get("output0_elements")
    if elements != bins:
        raise ValueError(f"output 0 has {elements} elements, the pitch decoding {bins} bins")
    return (
        f"/* Pitch: output 0 (dequantized) is the salience of {bins} bins, bin i at {p}_PITCH_CENTS_OFFSET +\n"
        f"   i * {p}_PITCH_CENTS_PER_BIN cents above 10 Hz. Returns the salience-weighted mean of the bins within\n"
        f"   {p}_PITCH_WINDOW of the best one, in Hz; *confidence (if not NULL) is the best bin's salience,\n"
        "   the periodicity to compare with a voicing threshold. As zoo.decode_pitch, in float32; the\n"
        f"   {p}_PITCH_* macros are the model header's. */\n"
        f"static inline float {a}_pitch_hz(const float *salience, float *confidence)\n{{\n"
        "    size_t best = 0;\n"
        f"    for (size_t i = 1; i < {p}_PITCH_BINS; i++) {{\n"
        "        if (salience[i] > salience[best]) {\n            best = i;\n        }\n    }\n"
        f"    const size_t lo = best > {p}_PITCH_WINDOW ? best - {p}_PITCH_WINDOW : 0;\n"
        f"    const size_t hi = best + {p}_PITCH_WINDOW < {p}_PITCH_BINS ? best + {p}_PITCH_WINDOW : {p}_PITCH_BINS - 1;\n"
        "    float total = 0.0f, moment = 0.0f;\n"
        "    for (size_t i = lo; i <= hi; i++) {\n"
        "        total += salience[i];\n"
        "        moment += salience[i] * ((float)i - (float)best);\n    }\n"
        "    /* Offsets from the best bin keep the sums small: float32 loses nothing to the 2000-cent offset. */\n"
        "    const float bin = (float)best + (total > 0.0f ? moment / total : 0.0f);\n"
        "    if (confidence != NULL) {\n        *confidence = salience[best];\n    }\n"
        f"    return 10.0f * exp2f(({p}_PITCH_CENTS_OFFSET + {p}_PITCH_CENTS_PER_BIN * bin) / 1200.0f);\n"
        "}\n\n"
    )
