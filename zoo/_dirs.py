"""zoo's folders for the user: cache, state and configuration, as platformdirs names them.

On Linux, in the usual case (an absolute ``HOME``, the XDG variable unset or absolute, not
an Android app), the folder is worked out here without importing platformdirs: its import
(pathlib, tempfile, shutil) is 7 ms of a 40 ms repeated ``zoo list``. Every other case asks
platformdirs. ``tests/test_dirs.py`` holds both ways equal.
"""

from __future__ import annotations

import os
import sys

__all__ = ["user_cache_dir", "user_config_dir", "user_state_dir"]

APP = "zoo"
_HOME_DEFAULTS = {"XDG_CACHE_HOME": ".cache", "XDG_CONFIG_HOME": ".config", "XDG_STATE_HOME": ".local/state"}


def _linux(variable: str) -> str | None:
    if sys.platform != "linux" or hasattr(sys, "getandroidapilevel") or "ANDROID_DATA" in os.environ:
        return None
    xdg = os.environ.get(variable, "")
    if os.path.isabs(xdg):
        return os.path.join(xdg, APP)
    home = os.environ.get("HOME", "")
    if os.path.isabs(home):
        return os.path.join(os.path.expanduser("~/" + _HOME_DEFAULTS[variable]), APP)
    return None


def _folder(variable: str, platformdirs_function: str) -> str:
    found = _linux(variable)
    if found is None:
        import platformdirs

        found = str(getattr(platformdirs, platformdirs_function)(APP))
    return found


def user_cache_dir() -> str:
    return _folder("XDG_CACHE_HOME", "user_cache_dir")


def user_config_dir() -> str:
    return _folder("XDG_CONFIG_HOME", "user_config_dir")


def user_state_dir() -> str:
    return _folder("XDG_STATE_HOME", "user_state_dir")
