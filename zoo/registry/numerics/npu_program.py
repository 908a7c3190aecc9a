"""The "NPU program" level of the Ethos-U check: each delegate's Vela program, run by the
command-stream interpreter (a stand-in for the NPU), against the TOSA reference model's outputs.

The reference model runs the TOSA graph Vela was given; the interpreter runs what Vela made
of it (its command stream, weight encoding and scales) on the same input bytes. Equal bytes
say Vela's program computes what its graph does; a difference fails the check. What the
interpreter does not model skips the level, which then never fails the build.

numpy and the interpreter are imported inside functions: ``numerics`` loads on cache hits.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["NAME", "SAMPLES", "STAND_IN", "Difference", "NpuProgram", "with_level"]

NAME = "npu_program"
SAMPLES = 8
"""The interpreter runs on the first samples only: about 30 ms a sample for mnist, 0.6 s for mv2."""
STAND_IN = "command-stream interpreter, a stand-in for the NPU"


@dataclass(frozen=True)
class Difference:
    """The first output element where the interpreter and the reference model disagree."""

    sample: int
    call: int
    """The delegate call, counted from 0 within the sample."""
    output: int
    element: int
    interpreter: int
    reference: int
    written_by: str | None = None
    """The last write to the element's first byte (the command and its byte offset in the stream); None if none."""
    in_program: bool = True
    """False: Vela's program has no output for this one of the graph's, so nothing writes it, and the
    interpreter's value is what its memory held (zero)."""

    def text(self) -> str:
        by = (f"last written by {self.written_by}" if self.written_by else "which no command wrote") if self.in_program \
            else "Vela's program has no such output: nothing writes it"
        return (f"sample {self.sample}, delegate call {self.call}, output {self.output}, element {self.element}: "
                f"interpreter {self.interpreter}, TOSA reference model {self.reference} ({by})")


@dataclass
class NpuProgram:
    """Compares each delegate call of the first ``samples`` samples; stops at the first difference or gap."""

    fast_scratch: Mapping[bytes, int] = field(default_factory=dict)
    """Each payload's (processed bytes') fast-scratch size, region 2: the arena cache of a Dedicated_Sram target."""
    samples: int = SAMPLES
    graphs: Mapping[bytes, bytes] = field(default_factory=dict)
    """Each payload's (processed bytes') TOSA graph: where given, the payload's convolution constants are
    compared with the graph's (``npu_constants.py``), once per payload, whichever samples run."""
    compared_samples: int = 0
    calls: int = 0
    skipped: str | None = None
    error: str | None = None
    difference: Difference | None = None
    constants: dict[str, Any] | None = None
    """The constants' comparison over every payload checked: operations, values, unrelated, difference."""
    seconds: float = 0.0
    kept: list[tuple[int, bytes, list[Any], list[Any]]] = field(default_factory=list, repr=False)
    """Each compared call (sample, processed bytes, inputs, reference outputs): a retargeted build runs them again."""
    _sample: int = -1
    _call: int = 0
    _payloads: dict[bytes, Any] = field(default_factory=dict, repr=False)
    _keys: dict[bytes, bytes] = field(default_factory=dict, repr=False)
    _constants_done: set[bytes] = field(default_factory=set, repr=False)

    def rerun(self, payloads: Mapping[bytes, bytes], fast_scratch: Mapping[bytes, int]) -> NpuProgram:
        """The level for the same calls with each payload replaced as ``payloads`` maps it
        (Vela's program for another target of the same TOSA graphs)."""
        graphs = {payloads[p]: g for p, g in self.graphs.items() if p in payloads}
        again = NpuProgram(fast_scratch, self.samples, graphs)
        for sample, processed, inputs, outputs in self.kept:
            if sample != again._sample:
                again.start_sample(sample)
            if processed not in payloads:  # never the old program in the new one's name
                again.error = f"sample {sample}: a delegate of the checked program has no payload in the retargeted one"
                break
            again.delegate_call(payloads[processed], inputs, outputs)
        return again

    @property
    def done(self) -> bool:
        return (self.skipped is not None or self.error is not None or self.difference is not None
                or (self.constants is not None and self.constants["difference"] is not None))

    def start_sample(self, index: int) -> None:
        self._sample, self._call = index, 0
        if index < self.samples and not self.done:
            self.compared_samples = index + 1

    def delegate_call(self, processed: bytes, inputs: Sequence[Any], outputs: Sequence[Any]) -> None:
        """Run the delegate's payload on ``inputs`` (numpy arrays, in the TOSA graph's memory order)
        and compare each output's bytes with ``outputs``, the reference model's."""
        call, self._call = self._call, self._call + 1
        if self._sample >= self.samples:
            return
        import numpy as np

        processed = self._keys.setdefault(processed, processed)  # one copy of each payload, however many calls
        # Copies: an input may be a view of a torch tensor the program goes on to use.
        self.kept.append((self._sample, processed, [np.array(a) for a in inputs], [np.array(o) for o in outputs]))
        if self.done:
            return
        from zoo.registry.command_stream import NotInterpreted, StreamError, Writers
        from zoo.registry.pte.vela_payload import PayloadError, find_payloads

        started = time.perf_counter()
        try:
            if processed not in self._payloads:
                found = find_payloads(processed)
                if len(found) != 1:
                    raise PayloadError(f"the delegate holds {len(found)} Vela payloads, not one")
                self._payloads[processed] = found[0]
            payload = self._payloads[processed]
            self._check_constants(processed, payload)
            if self.done:
                return
            given = [np.ascontiguousarray(a).tobytes() for a in inputs]
            got = _runner(payload)(payload, given, fast_scratch=self.fast_scratch.get(processed, 0))
        except NotInterpreted as e:
            self.skipped = str(e)
            self.compared_samples = 0
            return
        except (StreamError, PayloadError) as e:
            self.error = f"sample {self._sample}, delegate call {call}: {e}"
            return
        finally:
            self.seconds += time.perf_counter() - started
        self.calls += 1
        counts = ([info.elements for info in payload.outputs], [np.asarray(o).size for o in outputs])
        matched = _match_outputs(*counts)
        if matched is None:
            self.error = (f"sample {self._sample}, delegate call {call}: Vela's program has outputs of {counts[0]} "
                          f"elements, which do not follow the TOSA graph's {counts[1]}")
            return
        for k, want in enumerate(outputs):
            ref = np.ascontiguousarray(want).reshape(-1)
            j = matched[k]
            if j is None:  # an output Vela dropped (LRASPP's case): nothing writes it, the memory keeps its zeros
                mine = np.zeros_like(ref)
                size = ref.dtype.itemsize
            else:
                size = len(got[j]) // max(ref.size, 1)
                if ref.dtype.itemsize != size:
                    ref = ref.astype(np.dtype(f"<i{size}"))
                mine = np.frombuffer(got[j], dtype=ref.dtype)
            where = np.flatnonzero(mine != ref)
            if where.size:
                i = int(where[0])
                written_by = None
                if j is not None:
                    # Once, on the way out: the same run again, learning which command wrote each byte.
                    writers = Writers()
                    _runner(payload)(payload, given, fast_scratch=self.fast_scratch.get(processed, 0), writers=writers)
                    info = payload.outputs[j]
                    written_by = writers.of(info.region, info.offset + i * size)
                self.difference = Difference(self._sample, call, k, i, int(mine[i]), int(ref[i]), written_by,
                                             in_program=j is not None)
                return

    def _check_constants(self, processed: bytes, payload: Any) -> None:
        """Once per payload with a TOSA graph: its convolutions' constants against the graph's."""
        if processed not in self.graphs or processed in self._constants_done:
            return
        from zoo.registry.numerics.npu_constants import compare, graph_convs

        self._constants_done.add(processed)
        total = self.constants or {"operations": 0, "values": 0, "unrelated": [], "difference": None}
        found = compare(_constants_decoder(payload)(payload, fast_scratch=self.fast_scratch.get(processed, 0)),
                        graph_convs(self.graphs[processed]))
        total["operations"] += found.operations
        total["values"] += found.values
        total["unrelated"] += found.unrelated
        total["difference"] = found.difference
        self.constants = total

    @property
    def skip_reason(self) -> str | None:
        """Why the level checked nothing: what the interpreter does not model, or no delegate call at all
        (an Ethos-U build whose program never reaches the NPU is not "bit-exact")."""
        if self.skipped is not None or self.done:
            return self.skipped
        if not self.calls:
            return "no delegate ran: the samples never called an Ethos-U delegate, so no NPU program was compared"
        return None

    def check(self) -> dict[str, Any]:
        """The level as one of the check's entries: a skipped level passes, and says it was skipped."""
        passed = self.difference is None and self.error is None and self._constant_difference is None
        return {"name": NAME, "passed": passed, "skipped": self.skip_reason is not None, "detail": self.detail()}

    def detail(self) -> str:
        head = f"NPU program ({STAND_IN})"
        if (skipped := self.skip_reason) is not None:
            return f"{head}: skipped, {skipped}; a skipped level does not fail the build"
        if self._constant_difference is not None:
            return (f"{head}: a constant differs from the TOSA graph's: {self._constant_difference}: Vela's program "
                    "does not hold what its TOSA graph does")
        if self.difference is not None:
            return (f"{head}: differs from the TOSA reference model at {self.difference.text()}: "
                    "Vela's program does not compute what its TOSA graph does")
        if self.error is not None:
            return f"{head}: could not run Vela's program: {self.error}"
        text = (f"{head}: bit-exact with the TOSA reference model on {self.compared_samples} samples "
                f"(the first {self.samples} at most), {self.calls} delegate calls")
        if self.constants is not None and self.constants["operations"]:  # a program without convolutions has none
            text += (f"; the {self.constants['values']:,} weights, biases and scales of its "
                     f"{self.constants['operations']} convolutions equal the TOSA graph's constants")
        if self.constants is not None and (unrelated := len(self.constants["unrelated"])):
            text += (f"; {unrelated} convolution{'s' if unrelated > 1 else ''} not related to a convolution of the "
                     "TOSA graph, checked by the samples alone")
        return text

    @property
    def _constant_difference(self) -> str | None:
        return None if self.constants is None else self.constants["difference"]

    def record(self) -> dict[str, Any]:
        skipped = self.skip_reason
        outcome = "skipped" if skipped is not None else "passed" if self.check()["passed"] else "failed"
        return {
            "method": STAND_IN,
            "outcome": outcome,
            "samples": 0 if skipped is not None else self.compared_samples,
            "max_samples": self.samples,
            "delegate_calls": self.calls,
            "seconds": round(self.seconds, 3),
            "skipped": skipped,
            "error": self.error,
            "constants": self.constants,
            "first_difference": None if self.difference is None else {
                "sample": self.difference.sample, "delegate_call": self.difference.call,
                "output": self.difference.output, "element": self.difference.element,
                "interpreter": self.difference.interpreter, "reference": self.difference.reference,
                "written_by": self.difference.written_by, "in_program": self.difference.in_program},
        }


def _match_outputs(program: Sequence[int], graph: Sequence[int]) -> list[int | None] | None:
    """For each of the TOSA graph's outputs, the Vela program's output that holds it: the next one,
    in order, with its element count; None for one the program lacks (Vela drops a partition output
    that is also read inside the partition on the U55: compile/tosa_outputs.py). None if some of
    the program's outputs are left over. Two outputs of one size pair in order."""
    matched: list[int | None] = []
    j = 0
    for elements in graph:
        if j < len(program) and program[j] == elements:
            matched.append(j)
            j += 1
        else:
            matched.append(None)
    return matched if j == len(program) else None


def _runner(payload: Any) -> Any:
    """The interpreter of the payload's NPU (``config_r``'s product): the U85's, or the U55/U65's."""
    from zoo.registry.command_stream import run
    from zoo.registry.command_stream.u85 import is_u85
    from zoo.registry.command_stream.u85 import run as run_u85

    return run_u85 if is_u85(payload) else run


def _constants_decoder(payload: Any) -> Any:
    """The constants' decoder of the payload's NPU, picked as :func:`_runner` picks the interpreter."""
    from zoo.registry.command_stream import constants
    from zoo.registry.command_stream.u85 import constants as constants_u85
    from zoo.registry.command_stream.u85 import is_u85

    return constants_u85 if is_u85(payload) else constants


def with_level(record: dict[str, Any], level: NpuProgram) -> dict[str, Any]:
    """A copy of a numerics ``record`` whose NPU-program level is ``level``'s, and its verdict again."""
    checks = [level.check() if c["name"] == NAME else c for c in record["checks"]]
    return {**record, "checks": checks, NAME: level.record(), "passed": all(c["passed"] for c in checks)}
