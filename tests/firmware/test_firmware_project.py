"""``zoo firmware``'s projects, built for real with ExecuTorch's runtime for a Cortex-M55 and run in
QEMU's mps3-an547 (Cortex-M55 on SSE-300, no NPU).

- mnist and ds-cnn-fsdd for portable: 20 evaluation samples through the runtime on the Cortex-M55.
  Their outputs are the host runtime's to within the M55's fused multiply-adds, with the same arg-max,
  and the method allocator's use is exactly the header's 32-bit ``METHOD_ALLOCATOR_BYTES``.
- mnist and ds-cnn-fsdd for u55-128 (int8 I/O: the delegate is the whole program, so its outputs are printed
  as they leave the NPU's scratch): ExecuTorch's real Ethos-U backend runs down to the driver's invoke, where
  npu_standin, a stand-in for the driver, checks the command stream and every base address it is handed
  (compared here again with zoo's own parse of the Vela payload), then runs the program on npu_model, zoo's
  C model of the NPU. Its outputs must equal the host interpreter's bit for bit, and the TOSA reference
  model's on the samples the build's bundle holds.

The runtime is built once for the session from the vendor snapshots (../shared/vendor, laid out by
scripts/vendor_sources.py), as a user's project builds it from upstream's commits: a few minutes.
"""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, run_dir
from zoo import Artifact, Zoo

VENDOR = ROOT.parent / "shared" / "vendor"
TOOLS = {"arm-none-eabi-g++": "g++-arm-none-eabi (libstdc++-arm-none-eabi-newlib)", "qemu-system-arm": "qemu-system-arm",
         "cmake": "cmake", "ninja": "ninja-build"}
FLOAT_ATOL = 1e-5
"""gcc fuses multiply-adds on the Cortex-M55 (-ffp-contract=fast, its default); x86_64's host runtime
does not: mnist's outputs then differ by up to 5.7e-6 (bit-exact with -ffp-contract=off, measured)."""
SAMPLES = 20


def _missing() -> str | None:
    for tool, package in TOOLS.items():
        if shutil.which(tool) is None:
            return f"{tool} is not installed (make setup installs {package} as root)"
    if not (VENDOR / "executorch" / "runtime").is_dir():
        return f"the source snapshots are not at {VENDOR} (see docs/firmware-run.md for the upstream commits)"
    return None


pytestmark = [pytest.mark.compile, pytest.mark.skipif(_missing() is not None, reason=str(_missing()))]


def _lay_out(dest: Path) -> dict[str, str]:
    """The snapshots laid out in ``dest`` as a user's checkouts are, and their CMake paths."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from vendor_sources import lay_out
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    return lay_out(dest, VENDOR)


@pytest.fixture(scope="session")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return _lay_out(tmp_path_factory.mktemp("vendor"))


@pytest.fixture(scope="session")
def runtime_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh one per test run, shared by every project and worker (ZOO_TEST_FIRMWARE_RUNTIME names a
    lasting one, to skip the build when developing)."""
    import os

    given = os.environ.get("ZOO_TEST_FIRMWARE_RUNTIME")
    return Path(given) if given else run_dir(tmp_path_factory, "firmware-runtime")


def _project(model: str, target: str, folder: Path, shared_cache: Path, weights: str | None = None,
             io: str | None = None, precision: str | None = None, **kw: Any) -> Artifact:
    from zoo._api.firmware import write_firmware
    from zoo._options import FetchOptions

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOO_CACHE_DIR", str(shared_cache))
        art, _ = write_firmware(Zoo(), model, target, folder, FetchOptions(weights=weights, io=io, precision=precision), **kw)
    return art


def _configure(folder: Path, sources: dict[str, str], runtime_cache: Path, *options: str) -> str:
    args = [f"-D{k}={v}" for k, v in sources.items()] + [f"-DZOO_RUNTIME_CACHE={runtime_cache}", *options]
    configure = subprocess.run(["cmake", "-S", str(folder), "-B", str(folder / "build"), "-G", "Ninja", *args],
                               capture_output=True, text=True, timeout=3600)
    assert configure.returncode == 0, configure.stdout[-3000:] + configure.stderr[-3000:]
    return configure.stdout


def _build(folder: Path, sources: dict[str, str], runtime_cache: Path, *options: str) -> Path:
    _configure(folder, sources, runtime_cache, *options)
    build = subprocess.run(["cmake", "--build", str(folder / "build")], capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-2000:]
    # The project's -z noexecstack: without it every link warns that rdimon's objects imply one (issue 43).
    assert "executable stack" not in build.stdout + build.stderr, build.stdout[-4000:]
    return folder / "build" / "firmware.elf"


def _qemu(elf: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["qemu-system-arm", "-M", "mps3-an547", "-nographic", "-monitor", "none", "-serial", "none",
                           "-semihosting-config", "enable=on,target=native", "-kernel", str(elf)],
                          capture_output=True, text=True, timeout=300)


NOT_COMPUTED = " [npu stand-in: not computed]"
"""main.cpp's mark on the output and arg-max lines of a delegated program built with the stand-in, where
npu_model stopped at a command or mode it does not model."""
COMPUTED = " [npu stand-in: computed by zoo's model of the NPU, not the NPU]"
"""The mark where npu_model computed the delegate's outputs."""


def _outputs(stdout: str) -> dict[tuple[int, int], list[float]]:
    out: dict[tuple[int, int], list[float]] = {}
    for line in stdout.splitlines():
        if line.startswith("Y "):
            assert not line.endswith(NOT_COMPUTED), f"the stand-in computed none of these outputs: {line[:80]}"
            _, sample, index, *values = line.split()
            out[int(sample), int(index)] = [struct.unpack("<f", bytes.fromhex(v)[::-1])[0] for v in values]
    return out


@pytest.mark.parametrize("model", ["mnist", "ds-cnn-fsdd"])
def test_a_portable_program_runs_through_executorch_on_a_cortex_m55(model: str, shared_cache: Path, sources: dict[str, str],
                                                                runtime_cache: Path, tmp_path: Path) -> None:
    import torch
    from executorch.runtime import Runtime

    from zoo.registry.numerics.samples import firmware_samples

    art = _project(model, "portable", tmp_path / "fw", shared_cache, samples=SAMPLES)
    run = _qemu(_build(tmp_path / "fw", sources, runtime_cache))
    assert run.returncode == 0 and "DONE 0" in run.stdout, run.stdout[-3000:] + run.stderr[-2000:]
    used = re.search(r"^METHOD_ALLOCATOR used (\d+) header (\d+)$", run.stdout, re.M)
    assert used is not None and used.group(1) == used.group(2), run.stdout[:2000]
    assert int(used.group(2)) == (art.manifest.memory or {})["method_allocator_bytes"]

    device = _outputs(run.stdout)
    assert len(device) == SAMPLES
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOO_CACHE_DIR", str(shared_cache))
        samples = firmware_samples(Zoo().model(model), art.manifest.io or {}, SAMPLES)
    program = Runtime.get().load_program(art.pte.read_bytes())  # kept: the method uses the program
    method = program.load_method("forward")
    worst = 0.0
    for s, inputs in enumerate(samples.inputs):
        x = torch.tensor(inputs[0], dtype=torch.float32).reshape(art.manifest.io["inputs"][0]["shape"])  # type: ignore[index]
        (host,) = method.execute([x])
        got = torch.tensor(device[s, 0])
        assert int(torch.argmax(got)) == int(torch.argmax(host.reshape(-1))), s
        worst = max(worst, float((got - host.reshape(-1)).abs().max()))
    assert worst <= FLOAT_ATOL, worst


ITCM = (0x10000000, 512 * 1024)
SRAM = (0x31000000, 2 * 1024 * 1024)


def _address(elf: Path, part: str) -> int:
    """The address of the one function whose symbol holds ``part``."""
    nm = subprocess.run(["arm-none-eabi-nm", str(elf)], capture_output=True, text=True, check=True).stdout
    (address,) = [int(line.split()[0], 16) for line in nm.splitlines() if part in line and " T " in line]
    return address


def _inside(address: int, region: tuple[int, int]) -> bool:
    return region[0] <= address < region[0] + region[1]


def test_the_kernels_leave_an_itcm_the_application_could_not_use_and_compute_the_same(
        shared_cache: Path, sources: dict[str, str], runtime_cache: Path, tmp_path: Path) -> None:
    """ds-cnn-fsdd for portable fills 92.7 % of the Corstone-300's 512 KiB ITCM with ExecuTorch's kernels in it,
    less than the reserve left for an application: the build moves the kernel libraries' code and constants to
    SRAM, says so and why, and the image runs in QEMU with the same outputs, bit for bit, as the one a zero
    reserve keeps in ITCM."""
    folder = tmp_path / "fw"
    _project("ds-cnn-fsdd", "portable", folder, shared_cache, samples=2)
    elf, placement = folder / "build" / "firmware.elf", folder / "build" / "zoo_link" / "zoo_code_placement.ld"
    runs = {}
    for reserve in (None, 0):
        _configure(folder, sources, runtime_cache, *([] if reserve is None else [f"-DZOO_CODE_RESERVE={reserve}"]))
        build = subprocess.run(["cmake", "--build", str(folder / "build")], capture_output=True, text=True, timeout=600)
        assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-2000:]
        said = build.stdout[build.stdout.find("Memory region"):]
        itcm = int(re.search(r"ITCM: +(\d+) B", said).group(1))  # type: ignore[union-attr]
        if reserve is None:
            assert "the kernel libraries' code and constants" in build.stdout and "go to SRAM (NPU_SRAM)" in build.stdout, said
            from zoo.registry.firmware.boards import CODE_RESERVE_BYTES
            assert itcm <= ITCM[1] - CODE_RESERVE_BYTES and _inside(_address(elf, "native15convolution_out"), SRAM)
            written = placement.read_text()
            assert f"less than the {CODE_RESERVE_BYTES} B kept for the application" in written and "> NPU_SRAM" in written
            assert re.search(r"^\.zoo_kernels +0x31000000 ", (folder / "build" / "firmware.map").read_text(), re.M)
        else:
            assert "stay in ITCM" in build.stdout and ".zoo_kernels :" not in placement.read_text(), build.stdout
            assert itcm > ITCM[1] - CODE_RESERVE_BYTES and _inside(_address(elf, "native15convolution_out"), ITCM)
        run = _qemu(elf)
        assert run.returncode == 0 and "DONE 0" in run.stdout, run.stdout[-3000:] + run.stderr[-2000:]
        runs[reserve] = [line for line in run.stdout.splitlines() if line.startswith("Y ")]
    assert len(runs[None]) == 2 and runs[None] == runs[0]


def test_a_second_project_in_another_folder_builds_on_the_same_runtime(shared_cache: Path, sources: dict[str, str],
                                                                       runtime_cache: Path, tmp_path: Path) -> None:
    """The runtime's key is the content of its sources and toolchain, never a project's folder: a user's
    second model, in a folder of its own, configures in seconds, even after the first folder is gone."""
    first, second = tmp_path / "first", tmp_path / "second"
    _project("mnist", "portable", first, shared_cache, samples=1)
    _configure(first, sources, runtime_cache)  # builds the runtime, unless another test of this run did
    shutil.rmtree(first)
    _project("mnist", "portable", second, shared_cache, samples=1)
    # The second user's sources are another copy of the same commit: the runtime's build reads its
    # sources through a link that now points there (a kernel library it builds later needs them).
    other = _lay_out(tmp_path / "other-sources")
    configured = _configure(second, other, runtime_cache)
    assert "building ExecuTorch's" not in configured and "ExecuTorch's runtime from" in configured, configured
    toolchain = (second / "toolchain.cmake").read_bytes()
    runtimes = [d for d in runtime_cache.iterdir() if (d / "toolchain.cmake").is_file()
                and (d / "toolchain.cmake").read_bytes() == toolchain]
    assert len(runtimes) == 1, sorted(runtime_cache.iterdir())
    # It no longer reads the first copy. Under xdist another worker's project (the sensors pack's QEMU tests)
    # may have configured since and pointed it at that worker's copy of the same commit: any live copy will do.
    link = runtimes[0] / "sources" / "executorch"
    target = link.resolve()
    assert target != Path(sources["EXECUTORCH_SOURCE_DIR"]).resolve() and (target / "CMakeLists.txt").is_file(), target
    assert f"CMAKE_HOME_DIRECTORY:INTERNAL={link}\n" in (runtimes[0] / "build" / "CMakeCache.txt").read_text()
    build = subprocess.run(["cmake", "--build", str(second / "build")], capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-2000:]
    run = _qemu(second / "build" / "firmware.elf")
    assert run.returncode == 0 and "DONE 0" in run.stdout, run.stdout[-3000:] + run.stderr[-2000:]


def _blocks(pte: bytes, offset: int) -> dict[str, tuple[int, int]]:
    """Each block's data offset and size, from the payload at ``offset`` (vela_payload's layout)."""
    out, pos = {}, offset
    while True:
        name = pte[pos:pos + 16].rstrip(b"\0").decode()
        (size,) = struct.unpack_from("<I", pte, pos + 16)
        out[name] = (pos + 32, size)
        pos += 32 + (size + 15) // 16 * 16
        if name == "vela_end_stream":
            return out


def _int8_outputs(stdout: str) -> dict[int, bytes]:
    """Each sample's output 0 from its ``Y`` line, as int8 bytes; every line must carry the computed mark."""
    out = {}
    for line in stdout.splitlines():
        if line.startswith("Y "):
            assert line.endswith(COMPUTED), f"npu_model did not compute this output: {line[:120]}"
            _, sample, index, *values = line.removesuffix(COMPUTED).split()
            if index == "0":
                out[int(sample)] = bytes(int(v) & 0xFF for v in values)
    return out


def _records(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line.split(" ", 1)[1]) for line in stdout.splitlines() if line.startswith("npu_standin {")]


def _fnv1a(data: bytes) -> str:
    h = 2166136261
    for b in data:
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return f"{h:08x}"


@pytest.fixture(params=["mnist", "ds-cnn-fsdd"])
def int8_build(request: pytest.FixtureRequest) -> Artifact:
    """The verified int8-I/O build with a bundle: mnist's is the session's, ds-cnn-fsdd's its own session fixture."""
    art: Artifact = (request.getfixturevalue("mnist_io_builds")["mnist int8"] if request.param == "mnist"
                     else request.getfixturevalue("ds_cnn_int8"))
    return art


def test_a_program_on_u55_runs_on_the_stand_ins_model_of_the_npu_as_on_the_host_interpreter(
        int8_build: Artifact, shared_cache: Path, sources: dict[str, str], runtime_cache: Path,
        tmp_path: Path) -> None:
    """The driver's invoke gets the Vela program's own addresses; npu_model computes every sample's outputs, bit
    for bit the host interpreter's on the same input bytes, and the TOSA reference model's where the build's
    bundle holds them; one flipped weight byte in the .pte changes them (or stops the run with a record)."""
    from executorch.devtools.bundled_program.serialize import (
        deserialize_from_flatbuffer_to_bundled_program,
    )

    from zoo.registry import command_stream
    from zoo.registry.numerics.io import IoParams
    from zoo.registry.numerics.samples import firmware_samples
    from zoo.registry.pte.vela_payload import find_payloads

    model = int8_build.manifest.model
    art = _project(model, "u55-128", tmp_path / "fw", shared_cache, io="int8", samples=SAMPLES)
    assert art.pte.read_bytes() == int8_build.pte.read_bytes()  # the verified build's program
    elf = _build(tmp_path / "fw", sources, runtime_cache, "-DZOO_NPU_STANDIN=ON")
    run = _qemu(elf)
    assert run.returncode == 0 and "npu_standin failures: 0" in run.stdout, run.stdout[-3000:]
    used = re.search(r"^METHOD_ALLOCATOR used (\d+) header (\d+)$", run.stdout, re.M)
    assert used is not None and used.group(1) == used.group(2), run.stdout[:2000]
    results = [line for line in run.stdout.splitlines() if line.startswith(("Y ", "A "))]
    assert len(results) == SAMPLES * (1 + len(art.manifest.io["outputs"])) and all(  # type: ignore[index]
        line.endswith(COMPUTED) for line in results), results
    assert re.search(r"^samples 20, top-1 \d+ of 20 labelled \(npu_standin: computed by zoo's model of the NPU, "
                     r"not the NPU\)", run.stdout, re.M), run.stdout[-2000:]

    pte = art.pte.read_bytes()
    payloads = {p.offset: p for p in find_payloads(pte)}
    records = _records(run.stdout)
    calls = [r for r in records if "cmd" in r]
    assert len(calls) == SAMPLES * len(payloads)  # one invoke per delegate, per sample
    for r in calls:
        p = payloads[r["stream_offset"]]
        blocks = _blocks(pte, p.offset)
        assert (r["cmd"]["offset"], r["cmd"]["size"]) == blocks["cmd_data"]
        weights, scratch = r["bases"][0], r["bases"][1]
        assert (weights["pool"], weights["offset"], weights["size"]) == ("pte", *blocks["weight_data"])
        assert scratch["pool"] == "temp" and scratch["vela_scratch_size"] == p.scratch_size <= scratch["size"]
        assert scratch["offset"] + scratch["size"] <= r["temp"]["size"] == art.manifest.header["macros"]["temp_allocator_bytes"]
        for kind, tensors in (("inputs", p.inputs), ("outputs", p.outputs)):
            seen = next(x[kind] for x in records if x.get("call") == r["call"] and kind in x)
            assert [(t["offset"], t["bytes"], t["region"]) for t in seen] == [
                (t.offset, t.elements * t.element_size, t.region) for t in tensors]
    assert all(r["computed"] for r in records if "result" in r) and not any("not_implemented" in r for r in records)

    # The host interpreter on the input bytes the firmware fed: the samples zoo_inputs.c holds, quantized by
    # torch's rule (the I/O helper's, tests/firmware/test_cortex_m55.py), checked against the stand-in's hash.
    import torch

    (payload,) = payloads.values()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOO_CACHE_DIR", str(shared_cache))
        samples = firmware_samples(Zoo().model(model), art.manifest.io or {}, SAMPLES)
    (param,) = IoParams.from_record(art.manifest.io or {}).inputs
    given = [param.quantize(torch.tensor(s[0], dtype=torch.float32)).numpy().tobytes() for s in samples.inputs]
    hashes = [x["inputs"][0]["fnv1a"] for x in records if "inputs" in x]
    assert hashes == [_fnv1a(g) for g in given]
    host = [command_stream.run(payload, [g])[0] for g in given]
    device = _int8_outputs(run.stdout)
    assert [device[s] for s in range(SAMPLES)] == host

    # The TOSA reference model's outputs for the bundle's cases (the build's own, from its numerical check):
    # the same bytes on the samples the firmware ran too, so the same arg-max.
    assert int8_build.bundle is not None
    bundle = deserialize_from_flatbuffer_to_bundled_program(int8_build.bundle.read_bytes())
    cases = [(bytes(c.inputs[0].val.data), bytes(c.expected_outputs[0].val.data))
             for c in bundle.method_test_suites[0].test_cases]
    matched = [(given.index(i), o) for i, o in cases if i in given]
    assert matched, "none of the bundle's cases is among the firmware's samples"
    for s, reference in matched:
        assert device[s] == reference, s
        assert int(torch.frombuffer(bytearray(reference), dtype=torch.int8).argmax()) == int(
            torch.frombuffer(bytearray(device[s]), dtype=torch.int8).argmax()), s

    # One weight byte flipped in the .pte the firmware links: the outputs leave the clean host's (and stay the
    # host interpreter's on the flipped program), or the model stops at the stream with a record.
    model_pte = tmp_path / "fw" / "model" / art.pte.name
    at = pte.index(payload.data["weight_data"]) + 170
    model_pte.write_bytes(pte[:at] + bytes([pte[at] ^ 1]) + pte[at + 1:])
    (flipped,) = find_payloads(model_pte.read_bytes())
    build = subprocess.run(["cmake", "--build", str(tmp_path / "fw" / "build")], capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout[-4000:]
    mutated = _qemu(elf)
    try:
        want = [command_stream.run(flipped, [g])[0] for g in given]
    except command_stream.StreamError as e:
        assert mutated.returncode == 2 and any("stream_error" in r for r in _records(mutated.stdout)), (e, mutated.stdout[-3000:])
    else:
        assert mutated.returncode == 0, mutated.stdout[-3000:]
        got = _int8_outputs(mutated.stdout)
        assert [got[s] for s in range(SAMPLES)] == want and want != host

    # For the board: the same project with Arm's real core driver compiles and links (-Werror on zoo's
    # files); QEMU has no NPU at its base, so there the driver's own start-up check fails, as it must.
    model_pte.write_bytes(pte)
    real = subprocess.run(["cmake", "-S", str(tmp_path / "fw"), "-B", str(tmp_path / "fw" / "build"),
                           "-DZOO_NPU_STANDIN=OFF"], capture_output=True, text=True, timeout=600)
    assert real.returncode == 0, real.stderr[-3000:]
    linked = subprocess.run(["cmake", "--build", str(tmp_path / "fw" / "build")], capture_output=True, text=True,
                            timeout=600)
    assert linked.returncode == 0, linked.stdout[-4000:]
    nm = subprocess.run(["arm-none-eabi-nm", str(tmp_path / "fw" / "build" / "firmware.elf")], capture_output=True,
                        text=True, check=True).stdout
    assert " T ethosu_invoke_v3" in nm and " T ethosu_init" in nm and "npu_standin" not in nm and "npu_model" not in nm
    on_qemu = _qemu(tmp_path / "fw" / "build" / "firmware.elf")
    assert on_qemu.returncode == 1 and "FAIL ethosu_init at 0x48102000" in on_qemu.stdout, on_qemu.stdout[-2000:]


def test_a_command_the_stand_ins_model_lacks_leaves_the_outputs_marked_not_computed(
        shared_cache: Path, sources: dict[str, str], runtime_cache: Path, tmp_path: Path) -> None:
    """add on u55-128 is one ELEMENTWISE ADD, which npu_model computes (issue 58; before, it stopped there). With
    its mode changed to CLZ in the .pte the firmware links, which neither npu_model nor the host interpreter
    models, the stand-in says so in a record, and every line of the run says its outputs were not computed, with
    no accuracy. add declares no top-1, so a computed run prints none either."""
    from zoo.registry.pte.vela_payload import find_payloads

    art = _project("add", "u55-128", tmp_path / "fw", shared_cache, samples=2)
    elf = _build(tmp_path / "fw", sources, runtime_cache, "-DZOO_NPU_STANDIN=ON")
    run = _qemu(elf)
    assert run.returncode == 0 and "npu_standin failures: 0" in run.stdout, run.stdout[-3000:]
    assert [r["computed"] for r in _records(run.stdout) if "result" in r] == [True, True]
    assert "samples 2, outputs printed, no top-1: the model is not judged by one" in run.stdout, run.stdout[-2000:]

    pte = art.pte.read_bytes()
    (payload,) = find_payloads(pte)
    cmd = payload.data["cmd_data"]
    add, clz = struct.pack("<I", 6 | 1 << 16), struct.pack("<I", 6 | 7 << 16)  # NPU_OP_ELEMENTWISE ADD, CLZ
    assert cmd.count(add) == 1
    at = pte.index(cmd)
    (tmp_path / "fw" / "model" / art.pte.name).write_bytes(pte[:at] + cmd.replace(add, clz) + pte[at + len(cmd):])
    build = subprocess.run(["cmake", "--build", str(tmp_path / "fw" / "build")], capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout[-4000:]
    run = _qemu(elf)
    assert run.returncode == 0 and "npu_standin failures: 0" in run.stdout, run.stdout[-3000:]
    records = _records(run.stdout)
    stops = [r for r in records if "not_implemented" in r]
    assert len(stops) == 2 and all(re.fullmatch(r"ELEMENTWISE at byte 0x[0-9a-f]+: ELEMENTWISE CLZ \(ADD, SUB, MUL, "
                                                r"MIN, MAX and ABS are modelled\)", r["not_implemented"])
                                   and r["operations"] == 0 for r in stops), stops
    assert [r["computed"] for r in records if "result" in r] == [False, False]
    results = [line for line in run.stdout.splitlines() if line.startswith(("Y ", "A "))]
    assert results and all(line.endswith(NOT_COMPUTED) for line in results), results
    assert "top-1" not in run.stdout and "outputs not computed (npu_standin stands in for the NPU), so no accuracy: 2 " \
        "not computed" in run.stdout


def test_mv2_on_u85_links_for_the_corstone_320s_cortex_m85(shared_cache: Path, sources: dict[str, str],
                                                          runtime_cache: Path, tmp_path: Path) -> None:
    """Debian's gcc 12.2 has no -mcpu=cortex-m85: the runtime and the firmware are built for Armv8.1-M
    with MVE, and link with the real backend and Arm's driver configured for the U85."""
    _project("mv2", "u85-256", tmp_path / "fw", shared_cache, samples=1, weights="random")
    toolchain = (tmp_path / "fw" / "toolchain.cmake").read_text()
    assert "-march=armv8.1-m.main+mve.fp+fp.dp" in toolchain
    # Its CPU operators are the float boundary's quantize and dequantize: the runtime for this CPU
    # builds the quantized kernels, never the portable ones (most of a runtime's build time).
    configured = _configure(tmp_path / "fw", sources, runtime_cache)
    runtime = Path(re.search(r"ExecuTorch's runtime (?:from|into) (\S+)", configured)[1])  # type: ignore[index]
    assert (runtime / "zoo-quantized_kernels.done").is_file(), sorted(runtime.iterdir())
    assert not (runtime / "zoo-portable_kernels.done").exists() and "portable_kernels" not in configured, configured
    assert not (runtime / "build" / "kernels" / "portable" / "libportable_kernels.a").exists()
    elf = _build(tmp_path / "fw", sources, runtime_cache)
    attributes = subprocess.run(["arm-none-eabi-readelf", "-A", str(elf)], capture_output=True, text=True,
                                check=True).stdout
    assert "v8.1-M.mainline" in attributes and "MVE" in attributes, attributes
    nm = subprocess.run(["arm-none-eabi-nm", str(elf)], capture_output=True, text=True, check=True).stdout
    assert " T ethosu_invoke_v3" in nm


@pytest.mark.parametrize(("model", "samples", "precision"), [("mnist", SAMPLES, None), ("mv2", 1, None), ("mnist", 2, "a16w8")])
def test_a_u85_program_runs_on_the_stand_ins_model_in_the_cortex_m55_firmware(
        model: str, samples: int, precision: str | None, shared_cache: Path, sources: dict[str, str], runtime_cache: Path,
        tmp_path: Path) -> None:
    """QEMU has no Cortex-M85: the suite's u85-256 builds (mnist; mv2 at random weights; mnist at a16w8, 16-bit
    maps, tests/test_precision.py's), laid out for the Corstone-300, run in the Cortex-M55 machine on npu_model's
    U85 model, and the run and the README say so.
    Every delegate output is bit-equal to the host U85 interpreter's on the input bytes the firmware handed the
    NPU (printed by -DZOO_NPU_STANDIN_BYTES=ON, checked against their hash); without the stand-in the project
    refuses to configure, saying why."""
    from zoo.registry.command_stream.u85 import run as u85_run
    from zoo.registry.firmware.readme import U85_IN_QEMU
    from zoo.registry.pte.vela_payload import find_payloads

    folder = tmp_path / "fw"
    art = _project(model, "u85-256", folder, shared_cache, weights="random" if model == "mv2" else None,
                   precision=precision, board="corstone-300", samples=samples)
    assert U85_IN_QEMU in (folder / "README.md").read_text()
    args = [f"-D{k}={v}" for k, v in sources.items()] + [f"-DZOO_RUNTIME_CACHE={runtime_cache}"]
    refused = subprocess.run(["cmake", "-S", str(folder), "-B", str(tmp_path / "refused"), "-G", "Ninja", *args],
                             capture_output=True, text=True, timeout=600)
    said = " ".join(refused.stderr.split())  # CMake reflows a message's lines
    assert refused.returncode != 0 and "ethos-u85-256 on corstone-300: no board carries" in said, said[-2000:]
    assert "add -DZOO_NPU_STANDIN=ON" in said and not (tmp_path / "refused" / "build.ninja").exists()
    run = _qemu(_build(folder, sources, runtime_cache, "-DZOO_NPU_STANDIN=ON", "-DZOO_NPU_STANDIN_BYTES=ON"))
    assert run.returncode == 0 and "npu_standin failures: 0" in run.stdout, run.stdout[-3000:]
    assert f"zoo: {U85_IN_QEMU}\n" in run.stdout
    results = [line for line in run.stdout.splitlines() if line.startswith(("Y ", "A "))]
    assert len(results) == 2 * samples and all(line.endswith(COMPUTED) for line in results), results
    if model == "mv2":  # a top-1 classifier fed its calibration images, which have no label: no top-1 to count
        assert "samples 1, no sample has a label, so no top-1: each A line gives output 0's class (npu_standin: " \
            in run.stdout and "labelled" not in run.stdout, run.stdout[-2000:]

    (payload,) = find_payloads(art.pte.read_bytes())
    records = _records(run.stdout)
    handed = [r["inputs"] for r in records if "inputs" in r]
    left = [r["outputs"] for r in records if "outputs" in r]
    assert len(handed) == len(left) == samples
    assert all(r["operations"] == (6 if model == "mnist" else 65) for r in records if "model" in r)
    for inputs, outputs in zip(handed, left, strict=True):
        given = [bytes.fromhex(t["hex"]) for t in inputs]
        assert [_fnv1a(g) for g in given] == [t["fnv1a"] for t in inputs]
        assert [bytes.fromhex(t["hex"]) for t in outputs] == u85_run(payload, given)


def test_the_runtime_runs_the_lost_output_program_that_zoo_refuses(sources: dict[str, str], runtime_cache: Path,
                                                                    tmp_path: Path) -> None:
    """tests/lost_output_model.py on u55-128, compiled past zoo's refusal for this test only: its first
    delegate is called with two outputs, and Vela's program writes one. ExecuTorch's Ethos-U backend
    does not refuse it: load_method and execute succeed, and the second output is never copied out of
    the NPU's scratch. zoo's structure check is what refuses it (io_shapes)."""
    from tests.lost_output_model import LOST_OUTPUT_MODEL
    from zoo.registry.firmware.boards import BOARDS
    from zoo.registry.firmware.c_header import HeaderOptions, pte_asm, pte_header
    from zoo.registry.firmware.header_macros import header_macros
    from zoo.registry.firmware.model_io import render_io
    from zoo.registry.firmware.project import Samples, render_project
    from zoo.registry.npu.targets import TargetTable
    from zoo.registry.pte.program import read_program
    from zoo.registry.request.io_boundary import read_boundary
    from zoo.registry.verify.structure_check import Expected, check_structure

    (tmp_path / "two_heads.py").write_text(LOST_OUTPUT_MODEL)
    script = ("import sys; from pathlib import Path\n"
              "from zoo.registry.compile.pipeline import compile_model\n"
              "from zoo.registry.model_files.py_file import spec_from_model_file\n"
              "from zoo.registry.npu.targets import TargetTable\n"
              "r = compile_model(spec_from_model_file(Path(sys.argv[1])), TargetTable().resolve('u55-128'))\n"
              "Path(sys.argv[2]).write_bytes(r.pte)\n")
    pte_path = tmp_path / "two_heads.pte"
    made = subprocess.run([sys.executable, "-c", script, str(tmp_path / "two_heads.py"), str(pte_path)],
                          capture_output=True, text=True, timeout=600)
    assert made.returncode == 0, made.stderr[-3000:]
    pte = pte_path.read_bytes()
    program = read_program(pte)
    info = program.info
    target = TargetTable().resolve("u55-128")
    refused = {c.name: c for c in check_structure(pte, Expected(target=target))}["io_shapes"]
    assert not refused.passed and "called with 3 value(s), but its Vela payload has 1 input(s) and 1 output(s)" in refused.detail

    boundary = read_boundary(info, ["x"])
    io = {"mode": "float", "layout": "nchw", **boundary}
    macros = header_macros(program, target=target, model="two_heads", model_version="test", weights="random",
                           precision="int8", build_key="0" * 64, tools={}, vela_total={}, memory_fit=None, io=io)
    options = HeaderOptions()
    files = {"two_heads.pte": pte, "two_heads.h": pte_header(pte, file_name="two_heads.h", options=options,
                                                              macros=macros).encode(),
             "two_heads.s": pte_asm("two_heads.pte", len(pte), options).encode()}
    files.update(zip(("two_heads_io.h", "two_heads_io.c"),
                     (t.encode() for t in render_io("two_heads.h", options, macros)), strict=True))
    elements = int(macros["input0_elements"])  # type: ignore[arg-type]
    project = render_project(stem="two_heads", macros=macros, array="model_pte", model_files=files,
                             samples=Samples([[[0.25] * elements]], [None]), board=BOARDS["corstone-300"],
                             runtime_cache=runtime_cache)
    folder = tmp_path / "fw"
    for name, data in project.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    run = _qemu(_build(folder, sources, runtime_cache, "-DZOO_NPU_STANDIN=ON"))
    assert run.returncode == 0 and "DONE 0" in run.stdout, run.stdout[-3000:]  # the runtime did not refuse it
    records = _records(run.stdout)
    outputs = next(r["outputs"] for r in records if r.get("call") == 0 and "outputs" in r)
    assert len(outputs) == 1  # Vela's program for delegate 0 writes one of the two tensors the program reads
    copied_out = [r for r in records if r.get("call") == 0 and r.get("io_copy") == "from_scratch"]
    assert len(copied_out) < 2, copied_out  # so at most one output comes back; the other stays as it was
