"""Reading a written site as a browser would: its links, ids, scripts and text."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class Parsed(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.ids: set[str] = set()
        self.scripts: list[dict[str, str | None]] = []
        self.text: list[str] = []
        self.stack: list[str] = []
        self.rows: list[list[str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(str(a["id"]))
        for name in ("href", "src"):
            if a.get(name):
                self.links.append(str(a[name]))
        if tag == "script":
            self.scripts.append(a)
        if tag == "tr":
            self.rows.append([])
        if tag in ("td", "th") and self.rows:
            self.rows[-1].append("")
        if tag not in ("br", "meta", "link", "input", "img"):
            self.stack.append(tag)

    def plain(self) -> str:
        """The page's text as a reader sees it: one space between words."""
        return " ".join("".join(self.text).split())

    def handle_endtag(self, tag: str) -> None:
        if tag in self.stack:
            while self.stack and self.stack.pop() != tag:
                pass

    def handle_data(self, data: str) -> None:
        if "style" not in self.stack and "script" not in self.stack:
            self.text.append(data)
        if self.rows and ("td" in self.stack or "th" in self.stack) and self.rows[-1]:
            self.rows[-1][-1] += data


def parse(path: Path) -> Parsed:
    p = Parsed()
    p.feed(path.read_text(encoding="utf-8"))
    return p


def broken_links(site: Path, *, within: Path | None = None) -> list[str]:
    """Every relative link that does not lead to a file inside ``within`` (default: the site), and
    for a fragment to an id of that page."""
    inside = (within or site).resolve()
    parsed = {p.resolve(): parse(p) for p in site.rglob("*.html")}
    broken = []
    for page, content in parsed.items():
        for link in content.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc:
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if not target.is_file() or inside not in target.parents:
                broken.append(f"{page.name}: {link}")
            elif parts.fragment and target in parsed and parts.fragment not in parsed[target].ids:
                broken.append(f"{page.name}: {link} (no such id)")
    return broken
