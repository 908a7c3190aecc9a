"""``zoo site``: the catalogue as a static, self-contained site, made from the local
cache or from a remote's index: an index page grouped by task and a page per model.

``builds`` turns manifests and index records into one view; ``scale``, ``chart`` and
``markup`` are the pieces the pages share; ``index_page`` and ``model_page`` render;
``write`` puts the whole site in place in one swap.
"""

from __future__ import annotations

SITE_FOLDER = "_site"
"""Where ``zoo publish --site`` puts the site in a remote: model names cannot start with ``_``."""
