"""The Hub model card (``README.md``) of a published repository, rendered from its index."""

from __future__ import annotations

import html
import re
import shlex
from itertools import groupby
from typing import Any

from zoo._units import human_bytes
from zoo.registry.remotes.index import Index, IndexRecord
from zoo.registry.store.manifest import TargetOptions

_TOOLS = ("executorch", "ethos-u-vela", "torch")


_MARKDOWN = re.compile(r"([\\`*_\[\]()|!~<>])")


def _text(value: object) -> str:
    """A value a plugin or a remote supplied, as inert text in a Markdown table cell: HTML
    escaped, Markdown's punctuation backslashed (``|`` would end the cell), one line."""
    flat = " ".join(str(value).split())
    return _MARKDOWN.sub(r"\\\1", html.escape(flat, quote=True))


def _ms(value: Any) -> str:
    if not isinstance(value, (int, float)):
        return "–"
    if value >= 1:
        return f"{value:.2f} ms"
    return f"{value * 1000:.1f} µs" if value >= 0.001 else f"{value * 1e6:.0f} ns"


def _bytes(value: Any) -> str:
    # The index's figures are the publisher's word: anything but a number shows as unknown.
    return human_bytes(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else "–"


def _number(value: Any) -> str:
    # A remote's claim: anything but a number shows as unknown.
    return f"{value:.4g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "–"


def _metrics(value: list[Any]) -> str:
    out = []
    for x in value:
        if not isinstance(x, dict):
            continue
        text = f"{_text(x.get('name'))} {_number(x.get('float'))} → {_number(x.get('program'))}{_text(x.get('unit') or '')}"
        if x.get("reference") is not None:
            text += f" (declared {_number(x.get('reference'))})"
        out.append(text)
    return "; ".join(out) or "–"


def _accuracy(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, dict) and isinstance(value.get("metrics"), list):
        return _metrics(value["metrics"])
    if isinstance(value, dict):
        return ", ".join(_text(k) + " " + (f"{v:.1%}" if isinstance(v, float) and 0 <= v <= 1 else _text(v))
                         for k, v in sorted(value.items(), key=lambda kv: str(kv[0])))
    return _text(value)


def _tools(r: IndexRecord) -> str:
    return ", ".join(f"{t} {_text(r.tools[t])}" for t in _TOOLS if r.tools.get(t))


def fetch_command(r: IndexRecord, remote: str) -> str:
    """The ``zoo fetch`` line that resolves to this artifact's target and options, every value
    quoted for a POSIX shell: a name from a plugin or a remote must not redirect or run anything."""
    args = TargetOptions.from_json(r.target_options).fetch_argv()
    return shlex.join(["zoo", "fetch", r.model, *args, "--weights", r.weights, "--remote", remote])


def _share(r: IndexRecord) -> str:
    d = r.delegation or {}
    npu, cpu = d.get("npu_ops"), d.get("cpu_ops")
    if not isinstance(npu, int) or not isinstance(cpu, int) or npu + cpu == 0:
        return ""
    return f", {npu / (npu + cpu):.0%} NPU"


def catalogue_table(records: list[IndexRecord]) -> list[str]:
    """Models × targets: Vela's time and the NPU's share of operators per cell (the
    newest artifact of each), as ``zoo report --all`` shows them."""
    targets = sorted({r.target for r in records})
    newest: dict[tuple[str, str, str], IndexRecord] = {}
    for r in sorted(records, key=lambda r: (r.built_at, r.key)):
        newest[(r.model, r.weights, r.target)] = r
    rows = sorted({(m, w) for m, w, _ in newest})
    lines = ["| model | weights | " + " | ".join(_text(t) for t in targets) + " |", "| --- | --- |" + " --- |" * len(targets)]
    for model, weights in rows:
        cells = []
        for t in targets:
            found = newest.get((model, weights, t))
            cells.append("·" if found is None else f"{_ms((found.vela or {}).get('inference_time_ms'))}{_share(found)}")
        lines.append(f"| {_text(model)} | {_text(weights)} | " + " | ".join(cells) + " |")
    return lines


def model_card(index: Index, remote: str) -> str:
    records = sorted(index, key=lambda r: (r.model, r.slug, r.built_at, r.key))
    accelerators = sorted({str(r.target_options["accelerator"]) for r in records if r.target_options.get("accelerator")})
    # Tags are YAML list items: a name that is not a plain token would change the front matter.
    accelerators = [a for a in accelerators if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", a)]
    lines = ["---", "library_name: executorch", "tags:"]
    lines += [f"- {tag}" for tag in ("executorch", "ethos-u", *accelerators)]
    lines += [
        "---",
        "",
        "# ExecuTorch programs for Arm Ethos-U NPUs",
        "",
        "Prebuilt `.pte` programs and C headers, one per NPU configuration, published with `zoo`.",
        "Each artifact's folder holds the `.pte`, the `.h` and a `manifest.json` that records what went in",
        "(model version, weights, calibration data, target, tool versions) and what came out.",
        "`index.json` lists every artifact with the sha256 of its manifest; the manifest lists the sha256 of",
        "every file. `zoo fetch` checks both before it uses anything.",
        "",
        "Vela's figures are its static estimates for the configuration, not measurements on a board.",
        "",
        "## What runs on each NPU",
        "",
        "Vela's estimated time per inference and the share of operators that run on the NPU.",
        "",
        *catalogue_table(records),
    ]
    for model, group in groupby(records, key=lambda r: r.model):
        rows = list(group)
        lines += [
            "", f"## {_text(model)}", "",
            "| target | system config | memory mode | weights | licence | .pte | Vela: inference | SRAM | flash | metrics: float → program | built with | sha256 of the .pte |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for r in rows:
            pte = r.file("pte")
            vela = r.vela or {}
            opts = r.target_options
            lines.append(" | ".join([
                f"| {_text(r.target)}", _text(opts.get("system_config") or "–"), _text(opts.get("memory_mode") or "–"),
                _text(r.weights), _text((r.weights_info or {}).get("licence") or "–"),
                human_bytes(pte.size if pte else None), _ms(vela.get("inference_time_ms")),
                _bytes(vela.get("sram_bytes")), _bytes(vela.get("flash_bytes")),
                _accuracy(r.accuracy), _tools(r), f"`{_text(pte.sha256)}` |" if pte else "– |",
            ]))
        infos = {(r.weights, str(i.get("licence")), str(i.get("origin"))) for r in rows if (i := r.weights_info)}
        lines += [""] * bool(infos) + [f"Weights {_text(w)}: licence {_text(lic)}; origin {_text(origin)}."
                                       for w, lic, origin in sorted(infos)]
        # A value with a line break would end the code block early, quoted or not: such a line is left out.
        commands = [c for c in dict.fromkeys(fetch_command(r, remote) for r in rows) if c.isprintable()]
        lines += ["", "```sh", *commands, "```"]
    return "\n".join(lines) + "\n"
