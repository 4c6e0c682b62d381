"""Front matter: the YAML header at the top of a text file (or a sidecar), read with the line
of every key, and the scan for access lines that the header did not read.

A header is a YAML mapping between a first line ``---`` and a closing ``---`` or ``...`` (a
UTF-8 byte-order mark and blank lines before it are allowed); dates stay text, aliases may
expand to at most :data:`MAX_HEADER_VALUES` values, a key given twice, TOML ``+++``, a header
never closed and an ``acl:`` line outside a header are refused with ``file:line``. Line ends
are read as ``\n`` whatever they were (:func:`normal_line_ends`: CR, CRLF, NEL, U+2028).
:func:`unread_access_lines` refuses any line that looks like a key (``key:``, ``"key":``,
``key =``) folding to an access word that is not one of the header's own key lines. What the
keys mean is decided by the door, :mod:`workbench.corpus.admission`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from workbench.corpus.access import access_word
from workbench.io import InputError

__all__ = ["MAX_HEADER_VALUES", "normal_line_ends", "parse_header", "split_header",
           "unread_access_lines"]

_ACL_LINE = re.compile(r"^\s*acls?\s*:", re.IGNORECASE)
#: A line that looks like a key: ``key:``, ``- key:``, ``{"key":``, ``key =``, and a quoted
#: ``"key":`` anywhere in a line (JSON).
_KEY_LINE = re.compile(r"^\s*[^\w\s]{0,3}\s*[\"']?(?P<key>[^\s:=\"'{}\[\]]{2,40})[\"']?\s*[:=]")
_QUOTED_KEY = re.compile(r"[\"'](?P<key>[^\s\"']{2,40})[\"']\s*:")
_LINE_ENDS = re.compile(r"\r\n?|[\x85\u2028\u2029\x0b\x0c]")


def normal_line_ends(text: str) -> str:
    """``text`` with every line end (CR, CRLF, NEL, U+2028, ...) read as ``\\n``."""
    return _LINE_ENDS.sub("\n", text)


def _header_loader() -> type:
    import yaml

    class HeaderLoader(yaml.SafeLoader):
        """SafeLoader that keeps dates as text (validated here, with the file and line)."""

    HeaderLoader.yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
    return HeaderLoader


def split_header(raw: str, path: Path) -> tuple[str | None, int, str]:
    """``(header YAML or None, line number of its first line, body)``."""
    lines = raw.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        return None, 0, raw
    opener = lines[first].strip()
    if opener == "+++":
        raise InputError(f"{path}:{first + 1}", "TOML front matter (+++) is not read; write "
                         "the header as YAML between '---' lines")
    if opener != "---":
        for n, line in enumerate(lines[:12], start=1):
            if _ACL_LINE.match(line):
                raise InputError(f"{path}:{n}", "an 'acl:' line outside a front-matter "
                                 "header would make this document public; put the header "
                                 "between '---' lines at the top", field="acl")
        return None, 0, raw
    close = next((i for i in range(first + 1, len(lines))
                  if lines[i].rstrip() in ("---", "...")), None)
    if close is None:
        raise InputError(f"{path}:{first + 1}", "front matter opened here is never closed; "
                         "end it with a line '---' (or '...')")
    return "\n".join(lines[first + 1:close]), first + 2, "\n".join(lines[close + 1:])


#: The most values a front-matter header may expand to (YAML aliases included).
MAX_HEADER_VALUES = 10_000


def _expanded_size(node: Any, memo: dict[int, int]) -> int:
    """How many values ``node`` stands for once its aliases are expanded (each shared node
    counted once per use, computed once)."""
    key = id(node)
    if key not in memo:
        memo[key] = MAX_HEADER_VALUES + 1  # a node met again while counting: a cycle
        children = node.value if isinstance(node.value, list) else []
        flat = [c for pair in children for c in (pair if isinstance(pair, tuple) else (pair,))]
        memo[key] = min(1 + sum(_expanded_size(c, memo) for c in flat), MAX_HEADER_VALUES + 1)
    return memo[key]


def parse_header(text: str, line0: int, path: Path) -> tuple[dict[str, Any], dict[str, int]]:
    """The header's keys and values, and the line of each key; every problem names
    ``file:line``."""
    import yaml

    meta: dict[str, Any] = {}
    lines: dict[str, int] = {}
    try:  # the loader reads (and may refuse, ReaderError) the text as it is created
        loader = _header_loader()(text)
    except yaml.YAMLError as exc:
        char = getattr(exc, "character", None)
        code = ord(char) if isinstance(char, str) and len(char) == 1 else char
        shown = f"character {code:#06x}" if isinstance(code, int) else "a character"
        line = line0 + text.count("\n", 0, getattr(exc, "position", 0) or 0)
        raise InputError(f"{path}:{line}", f"front matter holds {shown}, which YAML does not "
                         "allow (a control character); remove it from the header") from None
    try:
        node = loader.get_single_node()
        if node is None:
            return meta, lines
        if not isinstance(node, yaml.MappingNode):
            raise InputError(f"{path}:{line0}", "front matter must be 'key: value' lines")
        if _expanded_size(node, {}) > MAX_HEADER_VALUES:
            raise InputError(f"{path}:{line0}", f"front matter expands to over "
                             f"{MAX_HEADER_VALUES:,} values (YAML aliases repeating aliases); "
                             "write the values out")
        for key_node, value_node in node.value:
            line = line0 + key_node.start_mark.line
            key = loader.construct_object(key_node, deep=True)
            if not isinstance(key, str):
                raise InputError(f"{path}:{line}", f"front-matter key {key!r} is not a name")
            if key in meta:
                raise InputError(f"{path}:{line}", f"given twice (first on line {lines[key]});"
                                 " keep one", field=key)
            meta[key] = loader.construct_object(value_node, deep=True)
            lines[key] = line
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f"{path}:{line0 + mark.line}" if mark is not None else str(path)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(where, f"front matter is not valid YAML ({problem}); fix the header")\
            from None
    except RecursionError:
        raise InputError(f"{path}:{line0}", "front matter nested too deeply to read") from None
    finally:
        loader.dispose()
    return meta, lines


def unread_access_lines(raw: str, path: Path, read: set[int]) -> None:
    """Refuse a line that looks like an access key (:func:`access_word`) and is not one of
    the header's top-level key lines ``read`` (those the header rules checked)."""
    for n, line in enumerate(raw.split("\n"), start=1):
        if n in read or len(line) > 10_000:
            continue
        keys = [m["key"] for m in _QUOTED_KEY.finditer(line)]
        head = _KEY_LINE.match(line)
        for key in ([head["key"]] if head else []) + keys:
            if access_word(key):
                raise InputError(f"{path}:{n}", f"{line.strip()[:60]!r} looks like access "
                                 "metadata but is not read as the header's acl, so the "
                                 "document would be public: put 'acl: [group]' in the "
                                 "front matter between '---' lines at the top", field=key)
