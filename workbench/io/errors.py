"""The package's one error type and its warnings' base.

:class:`WorkbenchError` (a ValueError) is what every check of user input raises, in one line
that says what to do; the ``workbench`` command catches only it. :class:`InputError` names
the file (line, field). :class:`WorkbenchWarning` is the base of every warning the package
issues, shown once per message as ``NameWarning: message`` (the hook is installed when this
module is imported).
"""

from __future__ import annotations

import sys
import warnings
from contextlib import suppress
from typing import TextIO

__all__ = ["InputError", "WorkbenchError", "WorkbenchWarning"]


class WorkbenchError(ValueError):
    """The package's own error: a bad input or a request it cannot do, in one line that says
    what to do. Every check of user input raises it (or a subclass); the ``workbench``
    command prints it as one line and exits 2, while any other exception is a bug and keeps
    its traceback. A ValueError, so ``except ValueError`` still catches it."""


class InputError(WorkbenchError):
    """Bad input or an impossible write, in one line: the file (line, field) and what to do.
    ``where`` is ``file`` or ``file:line``; ``field`` the field at fault, if any."""

    def __init__(self, where: str, message: str, field: str | None = None):
        self.where, self.field, self.reason = where, field, message
        named = f"field {field!r}: " if field else ""
        super().__init__(f"{where}: {named}{message}")


class WorkbenchWarning(UserWarning):
    """The base of every warning the package issues (a ``UserWarning``, so filters on that
    still apply); the test suite turns it into an error unless a test expects it.

    Shown once per message (a notebook re-running a cell is not told twice), as
    ``NameWarning: message``: the interpreter's file and line (a notebook cell's temporary
    file) say nothing to the person reading it. Filters set by the user still come first."""


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: TextIO | None = None, line: str | None = None) -> None:
    """``warnings.showwarning`` for the package's own warnings: the class and the message."""
    if not issubclass(category, WorkbenchWarning):
        _SHOW_OTHERS(message, category, filename, lineno, file, line)
        return
    text = f"{category.__name__}: {message}"
    if text in _SHOWN:  # once per message, whatever filters a host installed (IPython's)
        return
    _SHOWN.add(text)
    stream = sys.stderr if file is None else file
    if stream is not None:
        with suppress(OSError):
            stream.write(text + "\n")


_SHOWN: set[str] = set()
_SHOW_OTHERS = warnings.showwarning
warnings.showwarning = _show_warning
warnings.filterwarnings("once", category=WorkbenchWarning, append=True)
