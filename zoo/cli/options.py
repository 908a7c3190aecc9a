"""Options that several commands share: the fetch/build set, SRAM sizes and the implied model name."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, get_args

import click

from zoo._options import CHOICE_NAMES, IO_MODES, PRECISIONS, Choices, ExecutorName
from zoo._recipe import WEIGHT_TRANSFORMS
from zoo._spec import LAYOUTS

F = TypeVar("F", bound=Callable[..., Any])

EVAL_DIR_HELP = ("Measure float and int8 top-1 on your labelled images (implies --verify): one subfolder per class, "
                 "named by its label or index (e.g. DIR/7/*.png). Recorded with the data's digest.")


def fetch_options(f: F) -> F:
    """The arguments and options ``zoo fetch`` and ``zoo build`` both take."""
    opts = [
        click.argument("model", required=False),
        click.option("-t", "--target", help="Target or board, e.g. u55-128, ethos-u85-256, imx93, portable; "
                     "a comma-separated list, or 'all' (every Ethos-U accelerator)."),
        click.option("--all-models", is_flag=True, help="Every model in 'zoo list' instead of one MODEL."),
        click.option("-j", "--jobs", type=click.IntRange(min=1), default=1, show_default=True,
                     help="Compile in up to N processes (one per model and TOSA specification)."),
        click.option("--executor", type=click.Choice(get_args(ExecutorName)), default=None,
                     help="Where builds run: inline, processes (the default with --jobs > 1), or ray: one Ray task per "
                          "model and TOSA specification on a cluster (pip install 'ethosu-zoo[ray]'). "
                          "[default: zoo.toml's [executor] name]"),
        click.option("--ray-address", metavar="ADDR", help="The Ray cluster for --executor ray (implies it), e.g. "
                     "ray://head:10001 or auto. [default: RAY_ADDRESS, a running local cluster, else a new one]"),
        click.option("--ray-results", metavar="REMOTE", help="Ray tasks publish their artifacts here and the driver "
                     "downloads and checks them (implies --executor ray): a directory every node mounts, "
                     "s3://BUCKET/PREFIX or hf://ORG/REPO; best a scratch prefix, not the remote you release to. "
                     "[default: zoo.toml's [executor] ray_results, else through Ray's object store]"),
        click.option("--shard", metavar="K/N", help="Build only shard K of N: a deterministic, balanced 1/N of the "
                     "(model, TOSA specification) units, for a CI matrix of N jobs."),
        click.option("--keep-going", is_flag=True,
                     help="Build everything else when a build fails; report every failure at the end. Failures that "
                          "would recur are recorded, so 'fetch' does not compile them again ('build' does)."),
        *choice_option_list(),
        click.option("--eval-dir", type=click.Path(path_type=Path, file_okay=False), help=EVAL_DIR_HELP),
        click.option("-o", "--output", "out_dir", type=click.Path(path_type=Path, file_okay=False), help="Copy the artifacts into this directory."),
        click.option("--header-name", default="model_pte", show_default=True, help="C array name in the header."),
        click.option("--header-section", default="network_model_sec", show_default=True, help="Linker section of the array."),
        click.option("--header-style", type=click.Choice(["split", "single"]), default="split", show_default=True,
                     help="split: the header has the macros and declares the array, which a .s beside it defines "
                          "(.incbin of the .pte). single: one header that defines the array in the one file that "
                          "defines <ARRAY>_DEFINE before including it."),
        click.option("--force", "overwrite", is_flag=True,
                     help="Replace files in -o that belong to another artifact (another model, variant or target); "
                          "without it zoo refuses and names the file."),
        click.option("--labels-header", is_flag=True, help="Also hand out the output labels as a C string array."),
        click.option("--verify/--no-verify", "verify", default=None,
                     help="--verify: also run the numerical check (TOSA reference model, or the host runtime for portable) "
                          "and record it. --no-verify: hand out an artifact even if a check fails."),
        click.option("--bundle", is_flag=True,
                     help="Also write a BundledProgram (.bpte) and its C header for an on-device self-test (implies --verify)."),
        click.option("--json", "as_json", is_flag=True, help="Print the manifest and paths as JSON on stdout."),
        click.option("-q", "--quiet", is_flag=True, help="Print only the paths."),
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


def choice_option_list() -> list[Callable[[Any], Any]]:
    """The options of the build choices (``zoo._options.Choices``): what ``zoo fetch`` takes to pick the artifact,
    and every command that hands one out takes too (``zoo firmware``)."""
    return [
        click.option("--system-config", help="Vela system config (default: the target's)."),
        click.option("--memory-mode", help="Vela memory mode (default: the target's)."),
        click.option("--sram-budget", metavar="SIZE", help="Pick the fastest Vela options whose SRAM need fits SIZE "
                     "(e.g. 512KiB, 1MiB; default: the board's SRAM, if the target is a board that states it)."),
        click.option("--io", type=click.Choice(IO_MODES), default=None,
                     help="The program's inputs and outputs. float: ExecuTorch's default, the CPU quantizes the input "
                          "and dequantizes the output. int8/uint8: the quantized tensors themselves, nothing left on the "
                          "CPU (scales in the header). pixels: raw uint8 image bytes, normalised on the NPU. "
                          "[default: zoo.toml's default_io, else float]"),
        click.option("--layout", type=click.Choice(LAYOUTS), default=None,
                     help="Image input layout: nchw (planar) or nhwc (channels last, as a camera writes it). "
                          "[default: the model's; pixels: nhwc where the model allows]"),
        click.option("--precision", metavar="|".join(PRECISIONS) + "|RECIPE", default=None,
                     help="What the program is quantized at. int8: int8 activations and weights. a16w8: int16 "
                          "activations, int8 weights; less quantization noise for more SRAM and NPU time, with "
                          "--io float only. Or a recipe the model declares ('zoo info MODEL'). [default: int8]"),
        click.option("--recipe", type=click.Path(path_type=Path, dir_okay=False), default=None,
                     help="A recipe file (JSON: the whole model's precision and each module's that differs), "
                          "e.g. one 'zoo tune' wrote."),
        click.option("--qat", type=click.IntRange(min=0), metavar="STEPS", default=None,
                     help="Quantization-aware training: fine-tune STEPS batches with fake quantization until the "
                          "program matches the float model on the model's training data (models that declare it). "
                          "[default: the recipe's, else none]"),
        click.option("--weights-transform", type=click.Choice(list(WEIGHT_TRANSFORMS)), default=None,
                     help="Weights the NPU reads faster: paletteN (U55, U65) gives each layer N shared int8 values, "
                          "sparse24 (U85) prunes 2 of every 4 input channels' weights, fine-tuned (--qat, 300 steps "
                          "by default) where the model has training data. [default: the recipe's, else none]"),
        click.option("--weights", help="Weights variant (see 'zoo info MODEL')."),
        click.option("--calibration-dir", type=click.Path(path_type=Path, file_okay=False), help="Calibrate on your own samples instead of the model's default set."),
    ]


def choice_options(f: F) -> F:
    """``choice_option_list`` as one decorator; the command reads them back with ``choices_of``."""
    for opt in reversed(choice_option_list()):
        f = opt(f)
    return f


def _size(text: str | None) -> int | None:
    """``--sram-budget`` in bytes."""
    from zoo._config import parse_size

    return None if text is None else parse_size(text, where="--sram-budget")


def choices_of(kw: dict[str, Any]) -> Choices:
    """The build choices of ``zoo fetch``, ``zoo build`` and ``zoo verify``, from their parsed options."""
    return Choices(**{**{name: kw[name] for name in CHOICE_NAMES}, "sram_budget": _size(kw["sram_budget"])})


def _model_name(ctx: click.Context, model: str | None) -> str:
    """MODEL, or the model of the one ``--model-file`` when MODEL is left out."""
    if model:
        return model
    files = ctx.find_root().obj["model_files"]
    if len(files) == 1:
        from zoo.registry.model_files.py_file import model_name_for

        return model_name_for(Path(files[0]))
    raise click.UsageError("give a MODEL (see 'zoo list'), or exactly one --model-file")
