"""A view refuses a keyword argument it does not take, by name, before it builds anything.

``ChunkPreview(docs, sise=400)`` or ``Labeller(..., dence=False)`` fails at once with an
:class:`UnknownKeyword` that names the keyword, the one it was probably meant to be and every
keyword the view takes (Python's own error names the first stray keyword only). Every view
class in :mod:`workbench.widgets` carries :func:`refuse_unknown_keywords`
(``tests/widgets/test_keywords.py`` walks the package for one that does not).
"""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from workbench.io import WorkbenchError

__all__ = ["UnknownKeyword", "refuse_unknown_keywords"]

View = TypeVar("View", bound=type)
_BY_NAME = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


class UnknownKeyword(WorkbenchError, TypeError):
    """A view was given a keyword argument it does not take (a ``TypeError`` too, as
    Python's own refusal is)."""


def refuse_unknown_keywords(cls: View) -> View:
    """Class decorator: ``cls(...)`` with a keyword its ``__init__`` does not name raises
    :class:`UnknownKeyword` before ``__init__`` runs."""
    init: Callable[..., None] = cls.__init__  # type: ignore[misc]  # the class's, read once
    takes = [name for name, p in list(inspect.signature(init).parameters.items())[1:]
             if p.kind in _BY_NAME]

    @functools.wraps(init)
    def checked(self: Any, *args: Any, **kwargs: Any) -> None:
        unknown = [k for k in kwargs if k not in takes]
        if unknown:
            named = []
            for k in unknown:
                close = difflib.get_close_matches(k, takes, n=1)
                named.append(f"{k!r} (did you mean {close[0]!r}?)" if close else repr(k))
            raise UnknownKeyword(f"{cls.__name__} takes no keyword {', '.join(named)}; "
                                 f"it takes {', '.join(takes)}")
        init(self, *args, **kwargs)

    setattr(cls, "__init__", checked)  # noqa: B010  # mypy refuses assigning a method
    return cls
