"""The ``zoo`` command line. Listing commands never import torch."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from zoo._errors import ZooError


def _fail(exc: ZooError) -> NoReturn:
    click.echo(f"zoo: error: {exc}", err=True)
    sys.exit(exc.exit_code)


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ZooError as exc:
            _fail(exc)


def _zoo(ctx: click.Context) -> Any:
    from zoo._api import Zoo, ZooOptions

    obj = ctx.find_root().obj
    if "zoo" not in obj:
        obj["zoo"] = Zoo(ZooOptions(
            plugins=tuple(obj["plugins"]),
            model_files=tuple(obj["model_files"]),
            strict=obj["strict"],
            config_path=obj["config"],
        ))
    return obj["zoo"]


def _dump(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, sort_keys=True))


def _version() -> str:
    from zoo import __version__

    return __version__


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(_version(), "--version", prog_name="zoo")
@click.option("-p", "--plugin", "plugins", multiple=True, metavar="MODULE",
              help="Load a plugin module by import path (like pytest -p). Also ZOO_PLUGINS.")
@click.option("--model-file", "model_files", multiple=True, type=click.Path(path_type=Path),
              help="An aot_arm_compiler-style .py file defining ModelUnderTest and ModelInputs.")
@click.option("--strict", is_flag=True, help="Fail on a broken plugin instead of skipping it. Also ZOO_STRICT_PLUGINS=1.")
@click.option("--config", type=click.Path(path_type=Path, dir_okay=False), help="Use this zoo.toml.")
@click.pass_context
def main(ctx: click.Context, plugins: tuple[str, ...], model_files: tuple[Path, ...], strict: bool, config: Path | None) -> None:
    """Model zoo for ExecuTorch on Arm Ethos-U NPUs: fetch a verified .pte and C header per NPU configuration."""
    ctx.obj = {"plugins": list(plugins), "model_files": list(model_files), "strict": strict, "config": config}


@main.command("list")
@click.argument("pattern", required=False)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def list_cmd(ctx: click.Context, pattern: str | None, as_json: bool) -> None:
    """List models, optionally filtered by a glob PATTERN such as 'mobile*'."""
    from zoo._table import render

    specs = _zoo(ctx).models(pattern)
    if as_json:
        _dump([s.summary() for s in specs])
        return
    if not specs:
        click.echo(f"no model matches {pattern!r}" if pattern else "no models: no plugin registered any")
        return
    rows = [
        (s.name, ",".join(s.aliases), s.task, "x".join(map(str, s.inputs[0].shape)), s.description.split(". ")[0])
        for s in specs
    ]
    click.echo(render(("model", "aliases", "task", "input", "description"), rows))


@main.command()
@click.argument("model")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def info(ctx: click.Context, model: str, as_json: bool) -> None:
    """Show what a model declares: inputs, weights, calibration and labels."""
    spec = _zoo(ctx).model(model)
    data = spec.summary()
    if as_json:
        _dump(data)
        return
    click.echo(f"{spec.name}  (version {spec.version}, plugin {spec.source})")
    if spec.aliases:
        click.echo(f"  aliases:     {', '.join(spec.aliases)}")
    click.echo(f"  task:        {spec.task}")
    click.echo(f"  description: {spec.description}")
    for i in spec.inputs:
        extra = ""
        if i.range:
            extra += f", range {list(i.range)}"
        if i.mean:
            extra += f", mean {list(i.mean)}, std {list(i.std or ())}"
        click.echo(f"  input:       {i.name} {list(i.shape)} {i.dtype}{extra}")
    for w in data["weights"]:
        default = " (default)" if w["default"] else ""
        click.echo(f"  weights:     {w['name']}{default}: {w['description']} [{w['licence']}; {w['origin']}]")
    click.echo(f"  calibration: {spec.calibration.size} samples: {spec.calibration.description}")
    if spec.evaluation:
        click.echo(f"  evaluation:  {spec.evaluation.size} samples: {spec.evaluation.description}")
    if spec.label_count():
        click.echo(f"  labels:      {spec.label_count()}")


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def targets(ctx: click.Context, as_json: bool) -> None:
    """List Ethos-U targets, board presets and the portable CPU target."""
    from zoo._table import human_bytes, render
    from zoo.registry.targets import family_memory_modes, family_system_configs
    from zoo.registry.vela_config import vela_config

    table = _zoo(ctx).targets
    all_targets = table.all_targets()
    if as_json:
        families = {
            f: {"system_configs": family_system_configs(f), "memory_modes": family_memory_modes(f)}
            for f in ("u55", "u65", "u85")
        }
        _dump({
            "targets": [{**t.to_json(), "aliases": list(t.aliases)} for t in all_targets],
            "families": families,
            "vela_config": vela_config().source,
        })
        return
    rows = []
    for t in all_targets:
        alias = (t.board and f"board → {t.accelerator}") or ", ".join(t.aliases)
        rows.append((t.name, alias, t.system_config or "-", t.memory_mode or "-", human_bytes(t.sram_bytes) if t.sram_bytes else "-"))
    click.echo(render(("target", "aliases", "default system config", "memory mode", "SRAM"), rows))
    click.echo("")
    for f in ("u55", "u65", "u85"):
        click.echo(f"{f}: system configs {', '.join(family_system_configs(f))}")
        click.echo(f"{' ' * len(f)}  memory modes {', '.join(family_memory_modes(f))}")


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def plugins(ctx: click.Context, as_json: bool) -> None:
    """List plugins with their version, models and status."""
    from zoo._table import render

    statuses = _zoo(ctx).plugins
    if as_json:
        _dump([p.to_json() for p in statuses])
        return
    rows = [
        (p.name, p.kind, f"{p.dist} {p.version}" if p.dist else "-", p.status,
         p.error if p.status == "error" else ", ".join(p.models))
        for p in statuses
    ]
    click.echo(render(("plugin", "from", "distribution", "status", "models / error"), rows))


def _fetch_options(f: Any) -> Any:
    opts = [
        click.argument("model", required=False),
        click.option("-t", "--target", help="Target or board, e.g. u55-128, ethos-u85-256, imx93, portable; "
                     "a comma-separated list, or 'all' (every Ethos-U accelerator)."),
        click.option("--all-models", is_flag=True, help="Every model in 'zoo list' instead of one MODEL."),
        click.option("-j", "--jobs", type=click.IntRange(min=1), default=1, show_default=True,
                     help="Compile in up to N processes (one per model and TOSA specification)."),
        click.option("--system-config", help="Vela system config (default: the target's)."),
        click.option("--memory-mode", help="Vela memory mode (default: the target's)."),
        click.option("--sram-budget", metavar="SIZE", help="Pick the fastest Vela options whose SRAM need fits SIZE "
                     "(e.g. 512KiB, 1MiB; default: the board's SRAM, if the target is a board that states it)."),
        click.option("--weights", help="Weights variant (see 'zoo info MODEL')."),
        click.option("--calibration-dir", type=click.Path(path_type=Path, file_okay=False), help="Calibrate on your own samples instead of the model's default set."),
        click.option("-o", "--output", "out_dir", type=click.Path(path_type=Path, file_okay=False), help="Copy the artifacts into this directory."),
        click.option("--header-name", default="model_pte", show_default=True, help="C array name in the header."),
        click.option("--header-section", default="network_model_sec", show_default=True, help="Linker section of the array."),
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


def _size(text: str | None) -> int | None:
    from zoo._config import parse_size

    return None if text is None else parse_size(text, where="--sram-budget")


def _model_name(ctx: click.Context, model: str | None) -> str:
    if model:
        return model
    files = ctx.find_root().obj["model_files"]
    if len(files) == 1:
        from zoo.registry.model_file import model_name_for

        return model_name_for(Path(files[0]))
    raise click.UsageError("give a MODEL (see 'zoo list'), or exactly one --model-file")


def _run_fetch(ctx: click.Context, *, force_build: bool, allow_build: bool, remote: tuple[str, ...] = (),
               any_toolchain: bool = False, offline: bool = False, **kw: Any) -> None:
    from zoo._errors import UsageError
    from zoo._progress import StageReporter

    zoo = _zoo(ctx)
    as_json, quiet = kw.pop("as_json"), kw.pop("quiet")
    if kw.pop("all_models"):
        if kw["model"]:
            raise UsageError("give a MODEL or --all-models, not both")
        models = [spec.name for spec in zoo.models()]
    else:
        models = [_model_name(ctx, kw["model"])]
    targets = zoo.target_names(kw["target"])
    budget = _size(kw["sram_budget"])
    options: dict[str, Any] = {
        "weights": kw["weights"], "calibration_dir": kw["calibration_dir"], "system_config": kw["system_config"],
        "memory_mode": kw["memory_mode"], "sram_budget": budget,
    }
    # Resolve every name before anything compiles, so a typo fails at once.
    requests = [zoo.request(m, t, **options) for m in models for t in targets]
    label = f"{requests[0].spec.name} → {requests[0].target.name}"
    with StageReporter(label, enabled=not (quiet or as_json)) as progress:
        arts = zoo.fetch_many(
            models, targets, **options, out_dir=kw["out_dir"],
            header_array=kw["header_name"], header_section=kw["header_section"],
            labels_header=kw["labels_header"], build=allow_build, force_build=force_build,
            progress=progress, progress_for=progress.for_label if len(requests) > 1 else None,
            verify=kw["verify"], bundle=kw["bundle"], jobs=kw["jobs"],
            remotes=remote or None, any_toolchain=any_toolchain, offline=offline or None,
        )
    for art in arts:
        prefix = f"{art.manifest.model} for {art.manifest.target}: " if len(arts) > 1 else ""
        for warning in art.manifest.warnings:
            click.echo(f"zoo: warning: {prefix}{warning}", err=True)
        if art.verification is not None and not art.verification.passed:
            for problem in art.verification.problems():
                click.echo(f"zoo: warning: {prefix}failed verification (handed out because of --no-verify): {problem}", err=True)
    if as_json:
        _dump(arts[0].to_json() if len(arts) == 1 else [a.to_json() for a in arts])
        return
    for art in arts:
        click.echo(str(art.pte))
        click.echo(str(art.header))
        if art.labels_header:
            click.echo(str(art.labels_header))
        if art.bundle:
            click.echo(str(art.bundle))
            click.echo(str(art.bundle_header))
    if not quiet:
        click.echo(_summary(arts[0]) if len(arts) == 1 else _summary_table(arts), err=True)


def _summary_table(arts: list[Any]) -> str:
    from zoo._table import duration, human_bytes, render

    rows = []
    for art in arts:
        m = art.manifest
        t = (m.vela or {}).get("total", {})
        fit = m.memory_fit
        rows.append((
            m.model, m.target, {"cache": "cache", "remote": "remote", "build": "built"}[art.source],
            duration(t["inference_time_ms"]) if t else "-",
            human_bytes(t.get("sram_bytes")) if t else "-",
            (f"{'fits' if fit['fits'] else 'DOES NOT FIT'} {human_bytes(fit['sram_budget_bytes'])}"
             + (f" ({' '.join(fit['selected_flags'])})" if fit["selected_flags"] else "")) if fit else "-",
            human_bytes(m.file("pte").size),
        ))
    return render(("model", "target", "from", "Vela time", "SRAM", "SRAM budget", ".pte"), rows)


def _summary(art: Any) -> str:
    from zoo._table import duration, human_bytes

    m = art.manifest
    pte = m.file("pte")
    where = {"cache": "from cache", "remote": "downloaded and verified",
             "build": f"built in {m.build.get('seconds', 0):.1f} s"}[art.source]
    lines = [f"{m.model} for {m.target}: {human_bytes(pte.size)} .pte, sha256 {pte.sha256[:16]}…, {where}"]
    if m.vela:
        t = m.vela["total"]
        lines.append(
            f"  Vela estimate: {duration(t['inference_time_ms'])}/inference ({t['inferences_per_second']:,.0f}/s), "
            f"SRAM {human_bytes(t.get('sram_bytes'))}, flash {human_bytes((t.get('off_chip_flash_bytes') or 0) + (t.get('on_chip_flash_bytes') or 0))}, "
            f"DRAM {human_bytes(t.get('dram_bytes'))}"
        )
    fit = m.memory_fit
    if fit:
        chosen = " ".join(fit["selected_flags"]) or "Vela's default options"
        lines.append(f"  SRAM budget {human_bytes(fit['sram_budget_bytes'])} ({fit['budget_from']}): "
                     f"{'fits' if fit['fits'] else 'DOES NOT FIT'} with {chosen}, {len(fit['candidates'])} option set(s) tried")
    d = m.delegation
    if d:
        lines.append(f"  operators: {d.get('npu_ops')} on the NPU in {d.get('partitions')} partition(s), {d.get('cpu_ops')} on the CPU")
    v = art.verification
    if v is not None:
        lines.append(f"  verification: {_verification_line(v)}")
    return "\n".join(lines)


def _verification_line(v: Any) -> str:
    structure = sum(c.passed for c in v.checks)
    text = f"structure {structure}/{len(v.checks)} checks passed"
    n = v.numerics
    if n is None:
        return text + "; numerics not recorded (--verify runs them)"
    text += f"; numerics {'passed' if n.get('passed') else 'FAILED'} on {n['samples']} {n['dataset']} samples ({n['method']})"
    acc = n.get("accuracy")
    if acc:
        test = next(k for k in acc if k.endswith("_top1") and k != "float_top1")
        text += f"; top-1 float {acc['float_top1']:.2%}, {test.removesuffix('_top1')} {acc[test]:.2%}"
    elif n.get("top1_agreement"):
        from zoo.registry.verification import top1_text

        text += f"; top-1 {top1_text(n['top1_agreement'])}"
    return text


@main.command()
@_fetch_options
@click.option("--no-build", is_flag=True, help="Fail instead of compiling when nothing is cached or published.")
@click.option("--remote", multiple=True, metavar="REMOTE",
              help="Fetch prebuilt artifacts from here (repeatable; replaces zoo.toml's remotes): hf://ORG/REPO[@REV], a directory, http(s)://…")
@click.option("--any-toolchain", is_flag=True, help="Accept the newest prebuilt artifact even if built with other tool versions.")
@click.option("--offline", is_flag=True, help="Never touch the network (also ZOO_OFFLINE=1): cache and directory remotes only.")
@click.pass_context
def fetch(ctx: click.Context, /, no_build: bool, **kw: Any) -> None:
    """Get MODEL's .pte and C header for a target: from the cache, else a remote, else compiled here."""
    _run_fetch(ctx, force_build=False, allow_build=not no_build, **kw)


@main.command()
@_fetch_options
@click.pass_context
def build(ctx: click.Context, /, **kw: Any) -> None:
    """Compile MODEL for a target here, replacing any cached artifact."""
    _run_fetch(ctx, force_build=True, allow_build=True, **kw)


def _names_a_file(ctx: click.Context, arg: str) -> bool:
    from zoo._errors import UnknownModelError

    path = Path(arg)
    if path.suffix in (".pte", ".bpte") or "/" in arg or "\\" in arg:
        return True
    if not path.is_file():
        return False
    try:
        _zoo(ctx).model(arg)
    except UnknownModelError:
        return True
    return False


@main.command("verify")
@click.argument("model_or_path")
@click.option("-t", "--target", help="Target or board. For a .pte file: fail unless it was built for this target.")
@click.option("--system-config", help="Vela system config (default: the target's).")
@click.option("--memory-mode", help="Vela memory mode (default: the target's).")
@click.option("--sram-budget", metavar="SIZE", help="The SRAM budget the artifact was built for (see 'zoo fetch --help').")
@click.option("--weights", help="Weights variant (see 'zoo info MODEL').")
@click.option("--calibration-dir", type=click.Path(path_type=Path, file_okay=False), help="The calibration folder the artifact was built with.")
@click.option("--header", "header_path", type=click.Path(path_type=Path, dir_okay=False), help="For a .pte file: the C header to check against it (default: <stem>.h beside it).")
@click.option("--manifest", "manifest_path", type=click.Path(path_type=Path, dir_okay=False), help="For a .pte file: its manifest.json (default: the one beside it).")
@click.option("--structure-only", is_flag=True, help="Do not lower the model again to run the numerical check when the artifact has none recorded.")
@click.option("--no-build", is_flag=True, help="Fail instead of compiling when nothing is cached.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def verify_cmd(ctx: click.Context, model_or_path: str, target: str | None, system_config: str | None, memory_mode: str | None,
               sram_budget: str | None, weights: str | None, calibration_dir: Path | None, header_path: Path | None, manifest_path: Path | None,
               structure_only: bool, no_build: bool, as_json: bool) -> None:
    """Verify MODEL's artifact for a target (structure and numerics), or a .pte file from anywhere (structure).

    Exits with status 1 when a check fails.
    """
    path = Path(model_or_path)
    budget = _size(sram_budget)
    if _names_a_file(ctx, model_or_path):
        from zoo.registry.verification import verify_file

        if not path.is_file():
            raise click.UsageError(f"{path}: no such file")
        resolved = (_zoo(ctx).target(target, system_config=system_config, memory_mode=memory_mode, sram_budget=budget)
                    if target else None)
        result = verify_file(path, target=resolved, manifest_path=manifest_path, header_path=header_path)
    else:
        from zoo._progress import StageReporter

        zoo = _zoo(ctx)
        request = zoo.request(model_or_path, target, weights=weights, calibration_dir=calibration_dir,
                              system_config=system_config, memory_mode=memory_mode, sram_budget=budget)
        with StageReporter(f"{request.spec.name} → {request.target.name}", enabled=not as_json) as progress:
            result = zoo.verify(model_or_path, target, weights=weights, calibration_dir=calibration_dir,
                                system_config=system_config, memory_mode=memory_mode, sram_budget=budget,
                                numerics=not structure_only, build=not no_build, progress=progress)
    if as_json:
        _dump(result.to_json())
    else:
        click.echo("\n".join(result.lines()))
    if not result.passed:
        sys.exit(1)


@main.command()
@click.argument("model", required=False)
@click.option("-t", "--target", help="Target or board of the cached artifact.")
@click.option("--system-config", help="Vela system config (default: the target's).")
@click.option("--memory-mode", help="Vela memory mode (default: the target's).")
@click.option("--sram-budget", metavar="SIZE", help="The SRAM budget the artifact was built for (see 'zoo fetch --help').")
@click.option("--weights", help="Weights variant (see 'zoo info MODEL').")
@click.option("--all", "everything", is_flag=True, help="Publish every artifact in the cache.")
@click.option("--to", "--remote", "to", metavar="REMOTE",
              help="hf://ORG/REPO[@BRANCH] or a directory (default: the first of zoo.toml's remotes).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def publish(ctx: click.Context, model: str | None, target: str | None, system_config: str | None,
            memory_mode: str | None, sram_budget: str | None, weights: str | None, everything: bool, to: str | None, as_json: bool) -> None:
    """Publish cached artifacts to a remote. Only adds; never replaces a published artifact."""
    report = _zoo(ctx).publish(to, model=model, target=target, weights=weights, system_config=system_config,
                               memory_mode=memory_mode, sram_budget=_size(sram_budget), everything=everything)
    if as_json:
        _dump({
            "remote": report.remote, "revision": report.revision,
            "added": [{"model": r.model, "target": r.target, "key": r.key, "manifest": r.manifest} for r in report.added],
            "already": [{"model": r.model, "target": r.target, "key": r.key, "manifest": r.manifest} for r in report.already],
        })
        return
    for r in report.added:
        click.echo(f"published  {r.model} for {r.target}  {r.key[:12]}  {r.folder}/")
    for r in report.already:
        click.echo(f"already    {r.model} for {r.target}  {r.key[:12]}  {r.folder}/")
    commit = f" in commit {report.revision[:12]}" if report.revision else ""
    click.echo(f"{len(report.added)} published, {len(report.already)} already there: {report.remote}{commit}", err=True)


@main.command("report")
@click.argument("model")
@click.option("--weights", help="Only artifacts built with this weights variant (see 'zoo info MODEL').")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--html", "html_path", type=click.Path(path_type=Path, dir_okay=False),
              help="Write a self-contained HTML page with the table and a chart (needs matplotlib).")
@click.pass_context
def report_cmd(ctx: click.Context, model: str, weights: str | None, as_json: bool, html_path: Path | None) -> None:
    """Vela's estimates for MODEL's cached artifacts, one row per target: inference time, SRAM, DRAM, flash, .pte size."""
    from zoo.registry.report import collect, render_text, write_html

    if as_json and html_path:
        raise click.UsageError("give --json or --html, not both")
    zoo = _zoo(ctx)
    result = collect(zoo.cache, zoo.model(model), weights=weights, say=lambda msg: click.echo(f"zoo: {msg}", err=True))
    if html_path:
        click.echo(str(write_html(result, html_path)))
    elif as_json:
        _dump(result.to_json())
    else:
        click.echo(render_text(result))


@main.group()
def cache() -> None:
    """Inspect and tidy the local artifact cache."""


@cache.command("path")
@click.pass_context
def cache_path(ctx: click.Context) -> None:
    """Print the cache directory."""
    click.echo(str(_zoo(ctx).cache_dir))


@cache.command("ls")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def cache_ls(ctx: click.Context, as_json: bool) -> None:
    """List cached artifacts."""
    from zoo._table import human_bytes, render

    rows, data = [], []
    for key, entry, problem in _zoo(ctx).cache.scan():
        if entry is None:
            rows.append((key[:12], "?", "?", "-", f"unreadable: {problem}"))
            data.append({"key": key, "problem": problem})
            continue
        m = entry.manifest
        pte = m.file("pte")
        rows.append((key[:12], m.model, m.target, human_bytes(pte.size if pte else None), m.build.get("built_at", "")))
        data.append({"key": key, "model": m.model, "target": m.target, "path": str(entry.path), "built_at": m.build.get("built_at")})
    if as_json:
        _dump(data)
    elif rows:
        click.echo(render(("key", "model", "target", ".pte", "built"), rows))
    else:
        click.echo("the cache is empty")


@cache.command("verify")
@click.pass_context
def cache_verify(ctx: click.Context) -> None:
    """Re-check every cached file against its manifest's sha256."""
    bad = 0
    total = 0
    for key, _entry, problem in _zoo(ctx).cache.scan(verify=True):
        total += 1
        if problem:
            bad += 1
            click.echo(f"{key[:12]}  CORRUPT  {problem}")
    click.echo(f"{total - bad} of {total} entries verified" + (f", {bad} corrupt (run 'zoo cache prune --corrupt')" if bad else ""))
    if bad:
        sys.exit(1)


@cache.command("prune")
@click.option("--all", "prune_all", is_flag=True, help="Remove every entry.")
@click.option("--corrupt", is_flag=True, help="Remove entries that fail verification.")
@click.option("--older-than", type=int, metavar="DAYS", help="Remove entries built more than DAYS ago.")
@click.pass_context
def cache_prune(ctx: click.Context, prune_all: bool, corrupt: bool, older_than: int | None) -> None:
    """Remove cache entries (and leftovers of interrupted writes)."""
    from datetime import datetime, timedelta, timezone

    if not (prune_all or corrupt or older_than is not None):
        raise click.UsageError("say what to prune: --all, --corrupt or --older-than DAYS")
    store = _zoo(ctx).cache
    cutoff = datetime.now(timezone.utc) - timedelta(days=older_than) if older_than is not None else None
    removed = 0
    for key, entry, problem in store.scan(verify=corrupt):
        old = False
        if cutoff is not None and entry is not None:
            built = entry.manifest.build.get("built_at")
            old = bool(built) and datetime.fromisoformat(built) < cutoff
        if prune_all or (corrupt and problem) or old:
            store.evict(key)
            removed += 1
    store.clean_tmp(older_than_s=0 if prune_all else 3600)
    click.echo(f"removed {removed} entries")
