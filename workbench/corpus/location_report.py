"""How a production chunking was located: counts by method, and the chunks themselves.

Every located production chunk records how (``Chunk.metadata["located"]``, one of
:data:`~workbench.corpus.locate.HOW`, and ``"located_score"`` for an alignment); one that
could not be located records why (``"unlocated_kind"``, one of
:data:`~workbench.corpus.offsets.PROBLEMS`). :class:`LocationReport` counts them in four
groups: ``exact`` (the text as it is: at its offsets, found, or after the front matter),
``normalised`` (after whitespace/Unicode normalisation), ``aligned`` (another extraction's
text, aligned with a score) and ``unlocated`` (with what was done with them: refused,
skipped or kept as chunks holding no evidence).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from html import escape

from workbench.corpus.types import Chunk

__all__ = ["GROUPS", "UNLOCATED", "LocatedChunks", "LocationReport"]

#: The four groups a located chunk is counted in.
GROUPS = ("exact", "normalised", "aligned", "unlocated")
#: What a chunking does with a chunk it cannot locate: refuse the chunking, skip the chunk
#: (counted), or keep it as a chunk holding no evidence.
UNLOCATED = ("raise", "skip", "keep")
_GROUP_OF = {"offsets": "exact", "exact": "exact", "front_matter": "exact",
             "normalised": "normalised", "aligned": "aligned"}


@dataclass(frozen=True)
class LocationReport:
    """Counts of a located production chunking (see the module doc). ``methods`` counts each
    locating rule, ``problems`` each reason a chunk was not located; ``unlocated`` says what
    was done with those (``skip`` or ``keep``); ``lowest_score`` is the lowest alignment
    score taken (None without aligned chunks)."""

    methods: Mapping[str, int] = field(default_factory=dict)
    problems: Mapping[str, int] = field(default_factory=dict)
    unlocated: str = "skip"
    lowest_score: float | None = None

    @classmethod
    def of(cls, chunks: Iterable[Chunk], unlocated: str = "skip") -> LocationReport:
        """The report of ``chunks`` (located ones and, as empty chunks, unlocated ones)."""
        methods: Counter[str] = Counter()
        problems: Counter[str] = Counter()
        scores = []
        for c in chunks:
            kind = c.metadata.get("unlocated_kind")
            if kind is not None:
                problems[str(kind)] += 1
                continue
            methods[str(c.metadata.get("located", "exact"))] += 1
            if "located_score" in c.metadata:
                scores.append(float(c.metadata["located_score"]))
        return cls(dict(methods), dict(problems), unlocated, min(scores) if scores else None)

    @property
    def counts(self) -> dict[str, int]:
        """Chunks per group (:data:`GROUPS`)."""
        out = dict.fromkeys(GROUPS, 0)
        for how, n in self.methods.items():
            out[_GROUP_OF.get(how, "exact")] += n
        out["unlocated"] = sum(self.problems.values())
        return out

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def summary(self) -> str:
        c = self.counts
        aligned = (f"{c['aligned']} by alignment" + (f" (lowest score {self.lowest_score:.1f})"
                                                     if self.lowest_score is not None else ""))
        why = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in sorted(self.problems.items()))
        done = "skipped" if self.unlocated == "skip" else "kept without evidence"
        return (f"{self.total} production chunks: {c['exact']} located exactly, "
                f"{c['normalised']} by normalisation, {aligned}, {c['unlocated']} not located"
                + (f" ({why}; {done})" if why else ""))

    def __repr__(self) -> str:
        return f"LocationReport({self.summary()})"

    def _repr_html_(self) -> str:
        rows = "".join(f"<tr><td>{g}</td><td>{n}</td></tr>" for g, n in self.counts.items())
        return (f"<p>{escape(self.summary())}</p><table><tr><th>located</th><th>chunks</th>"
                f"</tr>{rows}</table>")


class LocatedChunks(list[Chunk]):
    """The chunks of a production chunking (a list, in the order given) with its
    :class:`LocationReport` as ``report``."""

    def __init__(self, chunks: Iterable[Chunk], report: LocationReport):
        super().__init__(chunks)
        self.report = report

    def _repr_html_(self) -> str:
        return self.report._repr_html_()
