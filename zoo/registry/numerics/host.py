"""The portable numerical check: the final .pte on the host with ``executorch.runtime``, against float.

executorch and torch are imported inside the function.
"""

from __future__ import annotations

import time
from typing import Any

from zoo._errors import BuildError
from zoo._spec import Sample
from zoo.registry.numerics import compare
from zoo.registry.numerics import metrics as metrics_
from zoo.registry.numerics.data import flat_outputs
from zoo.registry.numerics.reference import captured_native_output, single_threaded


@single_threaded
def check_portable(
    *,
    pte: bytes,
    float_model: Any,
    judging: metrics_.Judging,
) -> compare.NumericsResult:
    """Run the portable .pte on the host with ``executorch.runtime`` and compare with float."""
    started = time.perf_counter()
    with captured_native_output():  # the runtime reports its CPU probing on import
        from executorch.runtime import Runtime

        method = Runtime.get().load_program(pte).load_method("forward")
    vs_float: list[compare.Versus] = []
    close: list[compare.Versus] = []

    def step(i: int, sample: Sample) -> metrics_.Ran:
        got = flat_outputs(method.execute([t.contiguous() for t in sample]))
        fl = flat_outputs(float_model(*sample))
        wrong = compare.mismatched_outputs(got, fl, "the portable .pte")
        if wrong:
            raise BuildError(f"{wrong} (a fault of the lowering, not of the model: please report it with the model)")
        if not vs_float:
            vs_float.extend(compare.Versus() for _ in got)
            close.extend(compare.Versus() for _ in got)
        for k, (g, f) in enumerate(zip(got, fl, strict=True)):
            compare.within(g, f, compare.PORTABLE_ATOL, compare.PORTABLE_RTOL, close[k], None)
            compare.similar(g, f, None, vs_float[k], compare.PORTABLE_COSINE_MIN, None)
        return metrics_.Ran(got, fl, sample, got)

    kept = metrics_.run_samples(judging, step)
    for k, (c, f) in enumerate(zip(close, vs_float, strict=True)):
        ok = c.mismatched == 0 and f.failing == 0
        kept.checks.append(compare.check(
            f"vs_float[{k}]" if len(close) > 1 else "vs_float", ok,
            f"{compare.float_detail('portable', f, kept.samples, False)}; {c.mismatched} of {c.elements} elements outside "
            f"{compare.PORTABLE_ATOL:g} + {compare.PORTABLE_RTOL:g}·|x|",
        ))
        kept.outputs.append({"index": k, "vs_float": {**compare.versus_record(f), "mismatched_elements": c.mismatched,
                                                        "elements": c.elements, "passed": ok}})
    record: dict[str, Any] = {
        **kept.opening("executorch.runtime", judging.data),
        "outputs": kept.outputs,
        "tolerances": {"atol": compare.PORTABLE_ATOL, "rtol": compare.PORTABLE_RTOL,
                       "cosine_min": compare.PORTABLE_COSINE_MIN},
    }
    metrics_.conclude(record, kept, judging, "portable", started)
    return compare.NumericsResult(record, kept.cases, {"atol": compare.PORTABLE_ATOL, "rtol": compare.PORTABLE_RTOL})
