"""Where a text's layout ends a sentence, whatever its punctuation.

Notes and Markdown files break their text into blocks: a blank line ends a paragraph, and a line
that opens a heading, a list item or a quote starts a block of its own. A sentence never runs
across such a break ("…six weeks.\\n\\n## Cast\\n\\nJan" is not one sentence), and the mark that
opens a block ("## ", "- ", "1. ") is layout, not words of its first sentence. Both the indexer's
spaCy sentences and the citations' sentences follow this rule, so a unit and the sentence a
citation shows are cut alike. A mark is only layout where a block starts: "2. Bundesliga" in
the middle of a paragraph keeps its "2.".
"""

from __future__ import annotations

import re
from itertools import pairwise

# A heading's hashes, a list item's bullet or number, a quote's ">": a mark when a space follows.
_BLOCK_MARK = r"(?:#{1,6}|[-*+>]|\d{1,3}[.)])"
#: A blank line, or a line break before a line opening a heading, list item or quote.
LAYOUT_BREAK = re.compile(rf"\n[ \t]*\n|\n(?=[ \t]*{_BLOCK_MARK}[ \t])")
_MARK = re.compile(rf"{_BLOCK_MARK}[ \t]+")
_NON_SPACE = re.compile(r"\S")


def layout(text: str) -> tuple[str, list[int]]:
    """`text` with its block marks blanked, and the offset of each block's first word in it.

    Blanked to spaces, so the text keeps its length and every offset.
    """
    begins = [0, *(match.end() for match in LAYOUT_BREAK.finditer(text))]
    pieces: list[str] = []
    done = 0
    for begin in begins:
        first = _NON_SPACE.search(text, max(begin, done))
        mark = _MARK.match(text, first.start()) if first is not None else None
        if mark is not None:
            pieces += [text[done : mark.start()], " " * len(mark.group())]
            done = mark.end()
    plain = "".join([*pieces, text[done:]])
    starts: list[int] = []
    for begin in begins:
        first = _NON_SPACE.search(plain, begin)
        if first is not None and (not starts or first.start() > starts[-1]):
            starts.append(first.start())
    return plain, starts


def blocks(text: str) -> list[str]:
    """`text` cut where each block after the first starts, its block marks blanked.

    A text without layout is one block: itself.
    """
    plain, starts = layout(text)
    if not starts:
        return []
    return [plain[a:b] for a, b in pairwise([0, *starts[1:], len(plain)])]
