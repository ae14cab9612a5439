"""Board files (boards/*.json) for the simulator's tools: the wheel's geometry and the house's spin settings."""

from __future__ import annotations

import json
from pathlib import Path


def load_board(path: Path) -> tuple[dict, dict]:
    """(board dict, spin-setting overrides for the replay). Raises ValueError with the reason."""
    from cylindre.board.boardfile import check

    try:
        board = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError("board file %s: %s" % (path, exc)) from None
    err = check(board)
    if err:
        raise ValueError("board file %s: %s" % (path, err))
    overrides = dict(board.get("spin") or {})
    overrides["board"] = board["board"]
    return board, overrides
