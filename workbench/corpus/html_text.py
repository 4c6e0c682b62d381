"""HTML text without the page furniture, with headings as markdown and tables kept by row.

Extractor: the standard library's ``html.parser`` (no dependency; measured against bs4,
lxml, trafilatura and inscriptis it was the only one to keep every content block, every
table row on one line and no boilerplate). Rules:

* dropped with everything inside: ``script style noscript template svg iframe form button
  nav aside head`` and ``header``/``footer`` outside ``main``/``article`` (the site's, not
  an article's); HTML comments; elements with ``role`` navigation or search, and banner,
  contentinfo or complementary outside the main content (``role="main"`` counts as
  ``main``); documentation generators' furniture by class (Sphinx's ``sphinxsidebar`` and
  ``related`` bars, Read the Docs, Furo, PyData, MkDocs: :data:`FURNITURE_CLASSES`, outside
  the main content) and permalinks (``headerlink``, or an in-page link whose text is only
  ``¶``/``§``/``#``);
* ``h1``-``h6`` become ``#`` lines and are recorded in ``metadata["headings"]``;
* block elements (``p div li tr section article blockquote pre`` ...) are paragraphs; list
  items get ``- ``; a table row is one line, its cells joined by ``" | "``; ``br`` breaks a
  line; whitespace inside source text collapses (source line breaks are not breaks), except
  in ``pre``;
* entities are decoded and non-breaking spaces become spaces; ``<title>`` is the title.

Access (:func:`html_access`): the ``<meta>`` tags are read with the same parser (never a
pattern), attributes in any order and case: a tag whose ``name``, ``property`` or
``itemprop`` names readers (:func:`~workbench.corpus.access.access_like`) is a declaration
``{name: content}`` for the door (:mod:`workbench.corpus.admission`), which reads an ``acl``
and refuses the rest; only ``content`` is read (``data-content`` is not), and an attribute
given twice or a tag with two names refuses the document.
"""

from __future__ import annotations

import codecs
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from workbench.corpus.access import access_like
from workbench.corpus.blocks import TextBuilder
from workbench.io import InputError, WorkbenchError

__all__ = ["FURNITURE_CLASSES", "META_NAMES", "PERMALINK_CLASSES", "PERMALINK_TEXT", "SKIPPED",
           "SKIPPED_ROLES", "decode_html", "html_access", "html_to_text", "read_html"]

#: The attributes that name a ``<meta>`` tag's value.
META_NAMES = ("name", "property", "itemprop")

SKIPPED = frozenset({"script", "style", "noscript", "template", "svg", "iframe", "form",
                     "button", "nav", "aside", "head"})
_LANDMARK_SKIPPED = frozenset({"header", "footer"})
#: Roles that are furniture anywhere, and outside ``main`` (like ``header``/``footer``).
SKIPPED_ROLES = frozenset({"navigation", "search"})
_LANDMARK_ROLES = frozenset({"banner", "contentinfo", "complementary"})
#: Classes of documentation generators' furniture (Sphinx's basic/alabaster/nature themes,
#: Read the Docs, Furo, PyData, MkDocs): permalinks anywhere; sidebars, navigation bars,
#: breadcrumbs and footers outside the main content.
PERMALINK_CLASSES = frozenset({"headerlink", "anchorlink", "permalink"})
FURNITURE_CLASSES = frozenset({
    "sphinxsidebar", "sphinxsidebarwrapper", "related", "footer", "rst-footer-buttons",
    "wy-nav-side", "wy-breadcrumbs", "wy-nav-top", "toc-drawer", "sidebar-drawer",
    "skip-to-content", "mobile-header", "bd-sidebar", "bd-sidebar-primary",
    "bd-sidebar-secondary", "prev-next-area", "md-sidebar", "md-header", "md-footer"})
#: Text of a permalink anchor (``<a href="#...">¶</a>``) without a known class.
PERMALINK_TEXT = frozenset({"¶", "§", "#", "🔗"})
_BLOCKS = frozenset({"p", "div", "li", "ul", "ol", "table", "thead", "tbody", "tfoot", "tr",
                     "section", "article", "main", "blockquote", "pre", "dd", "dt", "dl",
                     "figcaption", "figure", "hr", "caption", "address", "details",
                     "summary", "header", "footer"})
_VOID = frozenset({"br", "hr", "img", "meta", "link", "input", "wbr", "source", "col",
                   "area", "base", "embed", "param", "track"})


class _Extractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out = TextBuilder()
        self.title = ""
        self._stack: list[str] = []
        self._skip = 0
        self._buffer: list[str] = []
        self._cells: list[str] | None = None
        self._cell: list[str] | None = None
        self._heading: int | None = None
        self._in_title = False
        self._pre = 0
        self._mains: list[bool] = []
        self._main = 0
        self._anchor: int | None = None

    # -- what a tag does
    def _skipped(self, tag: str, attrs: list[tuple[str, str | None]]) -> bool:
        found = dict(attrs)
        role = (found.get("role") or "").strip().lower()
        classes = set((found.get("class") or "").lower().split())
        in_main = bool({"main", "article"} & set(self._stack)) or self._main > 0
        return (tag in SKIPPED or role in SKIPPED_ROLES or bool(classes & PERMALINK_CLASSES)
                or (not in_main and (tag in _LANDMARK_SKIPPED or role in _LANDMARK_ROLES
                                     or bool(classes & FURNITURE_CLASSES))))

    def _flush(self, closing: str | None = None) -> None:
        """Write the buffered text: a paragraph, or a ``- `` list item when ``closing`` is
        ``li`` (items stay lines of one block until the list ends)."""
        text = "".join(self._buffer)
        self._buffer = []
        if self._heading is not None:
            return
        if self._pre:
            self.out.block(text.strip("\n"))
            return
        lines = [" ".join(line.split()) for line in text.split("\n")]
        lines = [line for line in lines if line]
        if not lines:
            return
        if closing == "li":
            lines[0] = "- " + lines[0]
        else:
            self.out.end_lines()
        for line in lines:
            self.out.line(line)
        if closing != "li":
            self.out.end_lines()

    def _push(self, tag: str, main: bool = False) -> None:
        self._stack.append(tag)
        self._mains.append(main)
        self._main += main

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        if self._skip or self._skipped(tag, attrs):
            if tag not in _VOID:
                self._skip += 1
                self._push(tag)
            return
        if tag == "a":
            href = dict(attrs).get("href") or ""
            self._anchor = len(self._buffer) if href.startswith("#") else None
        if tag in _VOID:
            if tag == "br" and self._cell is None:
                self._buffer.append("\n")
            return
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self._flush()
            self._heading = int(tag[1])
        elif tag == "tr":
            self._flush()
            self._cells = []
        elif tag in ("td", "th") and self._cells is not None:
            self._cell = []
        elif tag in _BLOCKS and self._cell is None:
            self._flush()
        if tag == "pre":
            self._pre += 1
        self._push(tag, (dict(attrs).get("role") or "").strip().lower() == "main")

    def handle_endtag(self, tag: str) -> None:
        if tag not in self._stack:
            return
        while self._stack:  # close what the author left open inside this element
            top = self._stack.pop()
            self._main -= self._mains.pop()
            self._close(top)
            if top == tag:
                break

    def _close(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if self._skip:
            self._skip -= 1
            return
        if tag == "a" and self._anchor is not None:  # a bare permalink: "¶" after a heading
            if "".join(self._buffer[self._anchor:]).strip() in PERMALINK_TEXT:
                del self._buffer[self._anchor:]
            self._anchor = None
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6") and self._heading is not None:
            level, self._heading = self._heading, None
            self.out.heading("".join(self._buffer), level)
            self._buffer = []
        elif tag in ("td", "th") and self._cell is not None and self._cells is not None:
            self._cells.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._cells is not None:
            cells = list(self._cells)
            while cells and not cells[-1]:
                cells.pop()
            if any(cells):
                self.out.line(" | ".join(cells))
            self._cells = None
        elif tag in _BLOCKS and self._cell is None:
            self._flush(tag)
            if tag in ("table", "ul", "ol", "dl"):
                self.out.end_lines()
        if tag == "pre":
            self._pre -= 1

    def handle_data(self, data: str) -> None:
        data = data.replace("\u00a0", " ")
        if self._in_title:
            self.title += data
        elif self._skip:
            return
        elif self._cell is not None:
            self._cell.append(data)
        elif self._pre:
            self._buffer.append(data)
        else:
            self._buffer.append(" ".join(data.split("\n")).replace("\r", " ").replace("\t", " "))

    def close(self) -> None:
        super().close()
        while self._stack:
            self._main -= self._mains.pop()
            self._close(self._stack.pop())
        self._flush()


def html_to_text(markup: str) -> tuple[str, str, list[dict[str, Any]]]:
    """Title, text and headings of an HTML string (see the module doc)."""
    parser = _Extractor()
    parser.feed(markup)
    parser.close()
    return " ".join(parser.title.split()), parser.out.text, parser.out.headings


class _MetaTags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[int, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "meta":
            self.tags.append((self.getpos()[0], attrs))


def html_access(path: Path) -> list[tuple[str, str | None, int]]:
    """``(name, content, line)`` of every ``<meta>`` tag of the file whose name says access
    (see the module doc); a tag with an attribute given twice or two names refuses it."""
    parser = _MetaTags()
    parser.feed(decode_html(path))
    parser.close()
    out = []
    for line, attrs in parser.tags:
        names = [(k, v or "") for k, v in attrs if k in META_NAMES]
        said = [v for _, v in names if access_like(v)]
        if not said:
            continue
        counted = [k for k, _ in attrs if k in (*META_NAMES, "content")]
        if len(names) > 1 or len(counted) != len(set(counted)):
            raise InputError(f"{path}:{line}", f"<meta> names readers ({said[0]!r}) with an "
                             "attribute given twice or two names, so what it declares is a "
                             "guess: write one <meta name=\"acl\" content=\"group, ...\">",
                             field=said[0])
        name = "acl" if said[0].strip().lower() == "acl" else said[0]  # names ignore ASCII case
        out.append((name, dict(attrs).get("content"), line))
    return out


def decode_html(path: Path) -> str:
    """The markup of an HTML file (UTF-8, or the charset it declares; a UTF-8 byte-order
    mark wins over a declared charset and is dropped)."""
    data = path.read_bytes()
    head = data[:2048].decode("ascii", "replace").lower()
    charset = "utf-8-sig"
    if "charset=" in head and not data.startswith(codecs.BOM_UTF8):
        charset = head.split("charset=", 1)[1].strip("\"' ").split('"')[0].split("'")[0]
        charset = charset.split(";")[0].split(">")[0].strip() or "utf-8-sig"
    try:
        markup = data.decode(charset)
    except (LookupError, UnicodeDecodeError):
        try:
            markup = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise WorkbenchError(f"{path}: not valid {charset} text (byte {exc.start}); save the "
                             "page as UTF-8") from None
    return markup


def read_html(path: Path) -> tuple[str, str, dict[str, Any]]:
    """Title, text and metadata of an HTML file (:func:`decode_html`)."""
    title, text, headings = html_to_text(decode_html(path))
    if not title and headings:
        title = headings[0]["text"]
    meta = {"format": "html", "headings": headings,
            "extraction": {"extractor": "html.parser", "warnings": []}}
    return title, text, meta
