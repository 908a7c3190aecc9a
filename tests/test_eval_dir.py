"""``--eval-dir DIR``: a user's labelled class folders as the numerical check's data."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.conftest import run_probed
from zoo import Dataset, InputSpec, ModelSpec, UsageError
from zoo._options import FetchOptions
from zoo.plugins import mnist
from zoo.registry.numerics import class_folders, data_identity, evaluation_from_dir
from zoo.registry.numerics.eval_dir import _quotas

if TYPE_CHECKING:
    from zoo import Artifact


def _files_dataset(directory: Path) -> Dataset:
    """A stand-in for a plugin's calibration_from_dir: one sample per file, the file's text."""
    files = sorted(p for p in directory.iterdir() if p.is_file())
    if not files:
        raise UsageError(f"image folder {directory}: no images found")
    contents = [p.read_text() for p in files]
    return Dataset(len(files), f"{len(files)} files", lambda: [(c,) for c in contents], lambda: "|".join(contents))


def _spec(labels: tuple[str, ...] | None = ("cat", "dog", "3", "bird"),
          from_dir: Callable[[Path], Dataset] | None = _files_dataset) -> ModelSpec:
    calibration = Dataset(1, "one", lambda: [(0,)], lambda: "calibration")
    return ModelSpec(
        name="toy", version="1", description="", task="image-classification",
        inputs=(InputSpec("x", (1,)),), build=lambda _: None, example_inputs=lambda: (0,),
        calibration=calibration, weights=(), labels=labels, calibration_from_dir=from_dir,
    )


def _folders(root: Path, **content: list[str]) -> Path:
    for name, texts in content.items():
        (root / name).mkdir(parents=True)
        for i, text in enumerate(texts):
            (root / name / f"{i}.txt").write_text(text)
    return root


# --- folder names to label indices ------------------------------------------------------------


def test_folders_map_by_label_name_first_then_by_index(tmp_path: Path) -> None:
    root = _folders(tmp_path / "d", dog=["a"], **{"3": ["b"], "0": ["c"]})
    (root / ".hidden").mkdir()
    (root / "README.txt").write_text("not a class")
    found = {f.path.name: f.index for f in class_folders(_spec(), root)}
    # "3" is the label of index 2, so it is that class, not index 3.
    assert found == {"0": 0, "dog": 1, "3": 2}


def test_an_unknown_folder_is_named_with_what_is_accepted(tmp_path: Path) -> None:
    root = _folders(tmp_path / "d", dog=["a"], horse=["b"])
    with pytest.raises(UsageError) as caught:
        class_folders(_spec(), root)
    message = str(caught.value)
    assert "'horse'" in message and "'cat', 'dog', '3', 'bird'" in message and "0–3" in message
    with pytest.raises(UsageError, match="'7'"):
        class_folders(_spec(), _folders(tmp_path / "e", **{"7": ["a"]}))  # an index past the last label


def test_two_folders_for_one_class_are_refused(tmp_path: Path) -> None:
    root = _folders(tmp_path / "d", cat=["a"], **{"0": ["b"]})
    with pytest.raises(UsageError, match=r"'0' and 'cat' both name class 0"):
        class_folders(_spec(), root)


def test_a_model_that_cannot_take_folders_says_why(tmp_path: Path) -> None:
    root = _folders(tmp_path / "d", cat=["a"])
    with pytest.raises(UsageError, match="no calibration_from_dir"):
        class_folders(_spec(from_dir=None), root)
    with pytest.raises(UsageError, match="declares no labels"):
        class_folders(_spec(labels=None), root)


def test_the_directory_itself_is_checked(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not a directory"):
        class_folders(_spec(), tmp_path / "missing")
    (tmp_path / "flat").mkdir()
    (tmp_path / "flat" / "x.png").write_bytes(b"")
    with pytest.raises(UsageError, match="no class folders"):
        class_folders(_spec(), tmp_path / "flat")


def test_a_class_folder_the_plugin_refuses_is_named(tmp_path: Path) -> None:
    root = _folders(tmp_path / "d", cat=["a"])
    (root / "dog").mkdir()
    with pytest.raises(UsageError, match=r"class folder 'dog': image folder .*no images"):
        evaluation_from_dir(_spec(), root)


# --- the dataset and its identity ----------------------------------------------------------------


def test_samples_carry_their_class_index(tmp_path: Path) -> None:
    root = _folders(tmp_path / "d", bird=["b1", "b2"], cat=["c1"])
    dataset = evaluation_from_dir(_spec(), root)
    assert dataset.size == 3
    assert dataset.load() == [(("c1",), 0), (("b1",), 3), (("b2",), 3)]


def test_identity_follows_the_data_and_the_label_mapping(tmp_path: Path) -> None:
    spec = _spec()
    root = _folders(tmp_path / "d", cat=["a"], dog=["b"])
    first = evaluation_from_dir(spec, root).identity()
    assert evaluation_from_dir(spec, root).identity() == first
    (root / "dog").rename(root / "bird")  # same images, another label
    assert evaluation_from_dir(spec, root).identity() != first
    (root / "bird").rename(root / "1")  # the same label as 'dog', by index
    assert evaluation_from_dir(spec, root).identity() == first
    (root / "cat" / "0.txt").write_text("changed")
    assert evaluation_from_dir(spec, root).identity() != first


def test_the_check_data_identity_names_the_eval_dir(tmp_path: Path) -> None:
    spec = _spec()
    own = data_identity(spec, spec.calibration)
    given = data_identity(spec, spec.calibration, evaluation_from_dir(spec, _folders(tmp_path / "d", cat=["a"])))
    assert own.startswith("calibration:") and given.startswith("eval-dir:class-folders:sha256:") and own != given


def test_a_large_set_is_shared_equally_between_classes() -> None:
    assert _quotas([5, 5], 4) == [2, 2]
    assert _quotas([1, 10, 10], 7) == [1, 3, 3]
    assert _quotas([2, 3], 1000) == [2, 3]


def test_eval_dir_is_a_fetch_option_not_a_choice() -> None:
    options = FetchOptions(eval_dir=Path("x"))
    assert options.eval_dir == Path("x") and not hasattr(options.choices, "eval_dir")


# --- the command line -----------------------------------------------------------------------------


@pytest.mark.slow
def test_fetch_refuses_an_unknown_folder_before_compiling(tmp_path: Path) -> None:
    root = _folders(tmp_path / "d", **{"7": ["a"], "seven": ["b"]})
    proc = run_probed("fetch", "mnist", "-t", "u55-128", "--eval-dir", str(root))
    assert proc.returncode != 0
    assert "folder 'seven' is neither a label of mnist nor a class index" in proc.stderr
    assert "'0', '1'" in proc.stderr and proc.loaded == []


@pytest.mark.slow
def test_verify_eval_dir_needs_a_model_and_numerics(tmp_path: Path) -> None:
    root = _folders(tmp_path / "d", **{"7": ["a"]})
    pte = tmp_path / "x.pte"
    pte.write_bytes(b"")
    proc = run_probed("verify", str(pte), "--eval-dir", str(root))
    assert proc.returncode != 0 and "--eval-dir needs a MODEL" in proc.stderr
    proc = run_probed("verify", "mnist", "-t", "u55-128", "--eval-dir", str(root), "--structure-only")
    assert proc.returncode != 0 and "drop --structure-only" in proc.stderr


# --- a real check -----------------------------------------------------------------------------------


def _write_held_out_pngs(root: Path) -> int:
    """mnist's held-out digits as 8-bit PNGs in folders 0…9: exactly its evaluation set."""
    import torch
    from PIL import Image

    spec = mnist.spec()
    assert spec.evaluation is not None
    items = spec.evaluation.load()
    for i, ((image,), label) in enumerate(items):
        pixels = (image * 255).round().to(torch.uint8).reshape(28, 28)
        folder = root / str(label)
        folder.mkdir(parents=True, exist_ok=True)
        Image.frombytes("L", (28, 28), pixels.numpy().tobytes()).save(folder / f"{i:04d}.png")
    return len(items)


@pytest.mark.compile
def test_eval_dir_of_the_held_out_digits_gives_the_built_in_numbers(
    built: dict[tuple[str, str], Artifact], tmp_path: Path
) -> None:
    from zoo import Zoo

    own: dict[str, Any] = (built[("mnist", "u55-128")].manifest.verification or {})["numerics"]
    root = tmp_path / "digits"
    count = _write_held_out_pngs(root)

    checked = Zoo().verify("mnist", "u55-128", eval_dir=root)  # the test's own, empty cache
    assert checked.numerics is not None and checked.passed
    n = checked.numerics
    assert n["dataset"] == "eval-dir" and n["samples"] == count == own["samples"]
    assert n["data_identity"].startswith("eval-dir:") and n["data_identity"] != own["data_identity"]
    assert n["metrics"][0]["float"] == own["metrics"][0]["float"]
    assert n["metrics"][0]["program"] == own["metrics"][0]["program"]

    again = Zoo().fetch("mnist", "u55-128", eval_dir=root)  # recorded for this data: no lowering
    assert again.source == "cache"
    assert again.verification is not None and again.verification.numerics == n
    # The user's evaluation is kept apart: the artifact's own record never holds it.
    assert ((again.manifest.verification or {}).get("numerics") or {}).get("dataset") != "eval-dir"


def _near_ties(root: Path, count: int) -> None:
    """Blends of two held-out digits at the mix where the float model's top two logits
    are closest (0.005 to 0.05 apart), each filed under the float model's own answer. Float
    top-1 is 100 % by construction; int8 rounding flips a good share of such ties, so
    the program drops far beyond top1's allowed 1 point. (An unrecognisable image would
    not do: float and int8 would both get it wrong, and no drop is no failure.)"""
    import torch
    from PIL import Image

    from zoo.plugins import _mnist5k

    model = mnist.spec().build("mnist")
    images, _ = _mnist5k.load(_mnist5k.eval_indices())
    pixels = (images[:, 0] * 255).round()
    steps = torch.arange(1, 64, dtype=torch.float32).reshape(-1, 1, 1) / 64
    kept = 0
    for i in range(0, pixels.shape[0] - 1, 2):
        blends = (pixels[i] + (pixels[i + 1] - pixels[i]) * steps).round().to(torch.uint8)
        with torch.no_grad():
            top = model((blends.float() / 255).unsqueeze(1)).topk(2)
        margins = top.values[:, 0] - top.values[:, 1]
        margins[margins < 0.005] = float("inf")  # too close for float itself to agree batched and unbatched
        j = int(margins.argmin())
        if float(margins[j]) < 0.05:
            folder = root / str(int(top.indices[j, 0]))
            folder.mkdir(parents=True, exist_ok=True)
            Image.fromarray(blends[j].numpy(), "L").save(folder / f"{i}.png")
            kept += 1
            if kept == count:
                return
    raise AssertionError(f"only {kept} near-ties among the held-out digits; {count} were wanted")


@pytest.mark.compile
def test_a_failing_evaluation_on_the_users_data_does_not_block_later_fetches(tmp_path: Path) -> None:
    from tests.conftest import run_zoo

    root = tmp_path / "ties"
    _near_ties(root, 20)

    verified = run_zoo("verify", "mnist", "-t", "u55-128", "--eval-dir", str(root))
    assert verified.returncode == 1, verified.stderr
    assert verified.stdout.startswith("mnist for ethos-u55-128 (mnist_u55-128.pte): FAILED"), verified.stdout

    fetched = run_zoo("fetch", "mnist", "-t", "u55-128", "--no-build")
    assert fetched.returncode == 0, fetched.stderr
    assert "failed verification" not in fetched.stderr
    assert run_zoo("cache", "verify").returncode == 0

    # The same data again: the recorded evaluation answers without lowering (--no-build), and still fails.
    again = run_zoo("fetch", "mnist", "-t", "u55-128", "--eval-dir", str(root), "--no-build")
    assert again.returncode == 1 and "failed verification" in again.stderr, again.stderr
    assert str(root) in again.stderr


@pytest.mark.stack
def test_a_16_bit_png_is_scaled_to_8_bits_not_clipped(tmp_path: Path) -> None:
    import numpy as np
    from PIL import Image

    folder = tmp_path / "7"
    folder.mkdir()
    ramp = (np.arange(28 * 28, dtype=np.uint32).reshape(28, 28) * 65535 // (28 * 28 - 1)).astype(np.uint16)
    Image.fromarray(ramp).save(folder / "ramp.png")
    assert Image.open(folder / "ramp.png").mode.startswith("I")
    [(pixels,)] = mnist.calibration_from_dir(tmp_path).load()
    got = pixels.reshape(28, 28).numpy()
    want = np.round(ramp / 65535 * 255) / 255
    assert abs(got - want).max() < 1e-6  # clipped, 99.9 % of these pixels were 1.0
    assert 0.49 < got.mean() < 0.51
    assert abs(float(_imagenet_tensor(folder / "ramp.png").mean()) - 0.5) < 0.01


def _imagenet_tensor(path: Path) -> Any:
    from PIL import Image

    from zoo.plugins._imagenet import Preprocessing

    prep = Preprocessing(side=28, interpolation="nearest", mean=(0.0, 0.0, 0.0), std=(1.0, 1.0, 1.0))
    with Image.open(path) as image:
        image.load()
        return prep.to_tensor(image)
