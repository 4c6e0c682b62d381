"""Chat logs and ticket threads cut at turn boundaries (:class:`ConversationChunker`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from workbench.chunking.base import DEFAULT_COUNTER, BudgetedChunker
from workbench.chunking.packing import Piece, Ruler, descend, pack, settle, to_chunks
from workbench.chunking.units import paragraph_units, sentence_units, word_units
from workbench.corpus import Chunk, Document
from workbench.corpus.conversations import Turn, document_turns

__all__ = ["ConversationChunker", "exchanges"]


def exchanges(turns: list[Turn]) -> list[list[Turn]]:
    """Turns grouped into exchanges: a new exchange starts when the thread's opener (the
    first speaker) speaks again after someone else, so a problem and the answers to it stay
    in one exchange."""
    groups: list[list[Turn]] = []
    opener = turns[0].speaker if turns else ""
    for turn in turns:
        if not groups or (turn.speaker == opener and groups[-1][-1].speaker != opener):
            groups.append([turn])
        else:
            groups[-1].append(turn)
    return groups


@dataclass(frozen=True, repr=False)
class ConversationChunker(BudgetedChunker):
    """Chunks of a conversation that never cut inside a turn unless the turn alone is over
    ``size`` (it is then cut by sentences, then words, like the recursive chunker).

    Turns come from :func:`~workbench.corpus.conversations.document_turns` (the loader's
    recorded turns, else ``Speaker:`` lines). A whole exchange (a problem and the replies up
    to the opener's next turn, :func:`exchanges`) is kept in one chunk when it fits; chunks
    are packed from exchanges, else from turns. A chunk after the conversation's first turn
    (the problem of a ticket) that holds a reply (a turn by another speaker) gets that first
    turn, cut to ``size // 2``, in front of its ``embed_text`` (``text`` stays the exact
    slice), so the resolution is retrieved with the problem it resolves; a chat that moves
    on to other problems still gets the first one. Text outside every turn (a title, a
    summary) is cut by paragraphs. Chunks record ``metadata["speakers"]`` (in order of
    first turn) and ``metadata["turns"]`` (how many turns start in the chunk). A document
    without turns is cut by paragraphs, sentences and words.
    """

    size: int = 800
    unit: str = "chars"
    counter: str = DEFAULT_COUNTER
    kind: ClassVar[str] = "conversation"

    def chunk(self, document: Document) -> list[Chunk]:
        text = document.text
        r = Ruler(text, self.unit, self.counter)
        turns = document_turns(document)
        splitters = (paragraph_units, sentence_units, word_units)
        pieces: list[Piece] = []
        pos = 0
        for group in exchanges(turns):
            if pos < group[0].start:  # text between turns: a title, a summary
                pieces += descend(r, pos, group[0].start, self.size, overlap=0, splitters=splitters)
            if r.likely_fits(group[0].start, group[-1].end, self.size):
                pieces.append(Piece(group[0].start, group[-1].end))  # may merge with others
            else:
                own = [p for t in group for p in descend(r, t.start, t.end, self.size, overlap=0,
                                                         splitters=splitters[1:])]
                pieces += [Piece(p.start, p.end, p.meta, solo=True)
                           for p in settle(pack(own, r, self.size), r, self.size)]
            pos = group[-1].end
        pieces += descend(r, pos, len(text), self.size, overlap=0, splitters=splitters)
        out = settle(pack(pieces, r, self.size), r, self.size)
        head = self._problem_prefix(r, turns[0]) if turns else ""
        for p in out:
            inside = [t for t in turns if p.start <= t.start < p.end]
            speakers = list(dict.fromkeys(t.speaker for t in turns
                                          if t.start < p.end and p.start < t.end))
            p.meta = {**p.meta, "speakers": speakers, "turns": len(inside)}
            if head and p.start >= turns[0].end and any(s != turns[0].speaker for s in speakers):
                p.prefix = head  # a reply without the problem it answers
        return to_chunks(document, out)

    def _problem_prefix(self, r: Ruler, problem: Turn) -> str:
        """The problem turn, cut to half the budget, then a blank line."""
        budget = max(1, self.size // 2)
        windows = r.windows(problem.start, problem.end, budget, 0)
        if not windows:
            return ""
        a, b = windows[0]
        return r.text[a:b] + ("" if b >= problem.end else " ...") + "\n\n"
