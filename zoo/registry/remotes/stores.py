"""Which object store a URL names, and whether its fsspec backend is installed
(found without importing it): ``s3://`` (``s3.py``), ``gs://``, ``az://`` and
``memory://`` (``object_store.py``)."""

from __future__ import annotations

import importlib.util
from urllib.parse import urlsplit

from zoo._errors import IntegrityError, MissingExtraError, UsageError, ZooError
from zoo.registry.remotes.index import check_relative_path
from zoo.registry.remotes.object_store import (
    AzureRemote,
    Backend,
    GcsRemote,
    MemoryRemote,
    ObjectStoreRemote,
)
from zoo.registry.remotes.s3 import S3Remote

BACKENDS = {
    "s3": Backend("s3", "s3fs", "pip install 'ethosu-zoo[s3]'", "Amazon S3 or an S3-compatible store"),
    "gs": Backend("gs", "gcsfs", "pip install 'fsspec[gcs]'", "Google Cloud Storage"),
    "gcs": Backend("gs", "gcsfs", "pip install 'fsspec[gcs]'", "Google Cloud Storage"),
    "az": Backend("az", "adlfs", "pip install 'fsspec[abfs]'", "Azure Blob Storage"),
    "abfs": Backend("az", "adlfs", "pip install 'fsspec[abfs]'", "Azure Blob Storage"),
    "memory": Backend("memory", "fsspec", "pip install fsspec", "fsspec's in-process memory store"),
}


class MissingRemoteExtra(MissingExtraError):
    """A remote whose fsspec backend is not installed."""

    def __init__(self, url: str, backend: Backend) -> None:
        ZooError.__init__(
            self, f"remote {url}: {backend.what} needs {backend.module}, which is not installed. "
            f"Install it with: {backend.install}"
        )


def object_store_remote(url: str) -> ObjectStoreRemote:
    """The remote for ``SCHEME://BUCKET[/PREFIX]``; its backend must be installed
    (checked without importing it)."""
    scheme = url.partition("://")[0].lower()
    backend = BACKENDS[scheme]
    parts = urlsplit(url)
    bucket = parts.netloc
    if "@" in bucket:
        # Never echo what stands before the '@': it may be a key and a secret.
        raise UsageError(f"remote {scheme}://…@{bucket.rpartition('@')[2]}{parts.path}: credentials do not belong "
                         "in the URL; zoo leaves them to the storage's own configuration (e.g. AWS_PROFILE)")
    if not bucket:
        raise UsageError(f"remote {url!r}: expected {scheme}://BUCKET or {scheme}://BUCKET/PREFIX")
    if parts.query or parts.fragment:
        raise UsageError(f"remote {url!r}: a remote URL takes no '?' or '#' part")
    prefix = parts.path.strip("/")
    if prefix:
        try:
            check_relative_path(prefix, where=f"remote {url!r}")
        except IntegrityError as exc:
            raise UsageError(str(exc)) from None
    clean = f"{scheme}://{bucket}" + (f"/{prefix}" if prefix else "")
    if importlib.util.find_spec(backend.module) is None:
        raise MissingRemoteExtra(clean, backend)
    kind = {"s3": S3Remote, "memory": MemoryRemote, "gs": GcsRemote, "az": AzureRemote}[backend.protocol]
    return kind(clean, backend, bucket, prefix)


__all__ = ["BACKENDS", "MissingRemoteExtra", "object_store_remote"]
