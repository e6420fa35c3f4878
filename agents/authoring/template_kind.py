"""What an accepted template really asks, read from its code: the category and concept of the blocks
it calls (a slot planned as anomaly detection whose template counts days above a threshold computes
arithmetic), and whether it is the prompt's skeleton with nothing changed but the block call and the
channel filled in. The run report says both, so that a reader of it knows what was authored."""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from pydantic import BaseModel

from itemsmith.agents.authoring.prompts import normalized_code, skeleton
from itemsmith.items.reasoning_blocks import BLOCK_CATEGORIES

_CHANNEL = re.compile(r"""take_window\(\s*handler\s*,\s*\w+\s*,\s*(["'])([^"']+)\1""")
_BLOCK_LINE = re.compile(r"^\s*res\s*=\s*(.+?)\s*(#.*)?$", re.MULTILINE)
_BLOCK_CALL = re.compile(rf"\b({'|'.join(BLOCK_CATEGORIES)})\s*\(")


class TemplateKind(BaseModel):
    """The category and concept of the blocks a template calls (None: it calls none, free code), the
    blocks, and whether it is the skeleton unchanged."""

    category: str | None = None
    concept: str | None = None
    blocks: list[str] = []
    skeleton_unchanged: bool = False


def called_blocks(source: str) -> list[str]:
    """The blocks with a category that the code calls, in order of first call."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names = [node.func.id for node in ast.walk(tree)
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in BLOCK_CATEGORIES]
    return list(dict.fromkeys(names))


def is_skeleton(source: str) -> bool:
    """The code is the generator prompt's skeleton with only its channel and its block call filled in
    (comments, layout and names aside)."""
    channel, block = _CHANNEL.search(source), _BLOCK_LINE.search(source)
    if channel is None or block is None:
        return False
    code = normalized_code(source)
    return code is not None and code == normalized_code(skeleton(block=block.group(1), channel=channel.group(2)))


def blocks_kind(blocks: Sequence[str]) -> tuple[str | None, str | None]:
    """The category and concept of what these blocks compute together: a reasoning block's over a
    statistics block's (a trend question that also reads a mean asks about the trend); None: no block."""
    ranked = sorted(blocks, key=lambda name: BLOCK_CATEGORIES[name][0] in ("arithmetic", "temporal_relation"))
    return BLOCK_CATEGORIES[ranked[0]] if ranked else (None, None)


def named_blocks(text: str) -> list[str]:
    """The blocks with a category that a text calls ("trend(win)" in a brief's `answer_from`), in order."""
    return list(dict.fromkeys(match.group(1) for match in _BLOCK_CALL.finditer(text)))


def template_kind(source: str) -> TemplateKind:
    """What the template's blocks compute (`blocks_kind`)."""
    blocks = called_blocks(source)
    category, concept = blocks_kind(blocks)
    return TemplateKind(category=category, concept=concept, blocks=blocks, skeleton_unchanged=is_skeleton(source))
