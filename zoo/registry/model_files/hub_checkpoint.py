"""Pretrained weights in torch's hub cache, for plugins' ``build``: a helper that
checks what is there, downloads what is not, and says what to do offline."""

from __future__ import annotations

from pathlib import Path

from zoo._errors import BuildError
from zoo.registry.offline import is_offline
from zoo.registry.store.cache import sha256_file


def hub_checkpoint(url: str, *, model: str) -> Path:
    """The file at ``url`` in torch's hub cache (``$TORCH_HOME/hub/checkpoints``, where
    ``torch.hub.load_state_dict_from_url`` and torchvision look), checked against the
    sha256 prefix in its name (``name-<prefix>.pth``).

    A missing file is downloaded first (torch checks the prefix) without torch's
    ``Downloading:`` line; offline, it is refused before any download starts. A file
    placed by hand is checked here, since torch checks only what it downloads. Errors
    are BuildErrors naming ``model`` and the way out (``--weights random``, or where to
    place the file)."""
    import torch.hub

    name = url.rsplit("/", 1)[-1]
    path = Path(torch.hub.get_dir()) / "checkpoints" / name
    found = torch.hub.HASH_REGEX.search(name)
    prefix = found.group(1) if found else None
    advice = (f"use '--weights random' for untrained weights, or download {url} on a connected machine "
              f"and place it at {path}")
    if path.is_file():
        if prefix and not sha256_file(path).startswith(prefix):
            raise BuildError(f"{model}: {path} is not the file at {url} (its sha256 does not start with "
                             f"{prefix}); delete it, then {advice}")
        return path
    if is_offline():
        raise BuildError(f"{model}: zoo is offline (--offline, offline in zoo.toml or ZOO_OFFLINE) and "
                         f"{path} is not in torch's hub cache, so nothing was downloaded; {advice}")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        torch.hub.download_url_to_file(url, str(path), hash_prefix=prefix, progress=False)
    except Exception as exc:
        raise BuildError(f"{model}: cannot download {url} ({type(exc).__name__}: {exc}); {advice}") from exc
    return path
