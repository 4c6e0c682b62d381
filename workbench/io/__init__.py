"""File I/O shared by every writer and reader of user files, and the package's error type.

Owns the one error type and the warnings' base (:mod:`~workbench.io.errors`:
:class:`WorkbenchError`, :class:`InputError`, :class:`WorkbenchWarning`), reading text and
JSON with file:line errors (:mod:`~workbench.io.reading`), the lock of a file
(:mod:`~workbench.io.locking`) and atomic, locked writes that never overwrite a newer file
(:mod:`~workbench.io.writing`).

Layer: the lowest; imports nothing from the rest of the package.
"""

from __future__ import annotations

from workbench.io.errors import InputError, WorkbenchError, WorkbenchWarning
from workbench.io.locking import LOCK_TIMEOUT_S, lock_path, locked
from workbench.io.reading import (
    MAX_JSONL_LINE,
    FileStamp,
    decode_json_file,
    decode_json_line,
    find_lone_surrogate,
    is_int,
    iter_jsonl,
    read_text,
    read_text_stamped,
)
from workbench.io.writing import (
    StaleFileError,
    append_text,
    atomic_write_bytes,
    atomic_write_text,
    encode_text,
    target_path,
    temp_files,
    write_unless_changed,
)

__all__ = ["LOCK_TIMEOUT_S", "MAX_JSONL_LINE", "FileStamp", "InputError", "StaleFileError",
           "WorkbenchError", "WorkbenchWarning", "append_text", "atomic_write_bytes",
           "atomic_write_text", "decode_json_file", "decode_json_line", "encode_text",
           "find_lone_surrogate", "is_int", "iter_jsonl", "lock_path", "locked", "read_text",
           "read_text_stamped", "target_path", "temp_files", "write_unless_changed"]
