"""The controller's event streams held byte for byte: simulated feeds with fixed seeds (noisy,
every fault scenario, both boards) replayed through `cylindre replay`, status events included,
against the digests in tests/data/golden_events.json. A refactoring of firmware/cylindre/spin or
board/ must leave them as they are; a change of behaviour regenerates them
(`.venv/bin/python tests/golden.py digests > tests/data/golden_events.json`) and says why in its
commit. The larger comparison, CPython and MicroPython: `tests/golden.py save|check DIR`."""

import json
from pathlib import Path

import pytest

import golden

KEPT = json.loads((Path(__file__).parents[1] / "data" / "golden_events.json").read_text())


@pytest.mark.parametrize("name,sim,board", golden.cases("small"), ids=[c[0] for c in golden.cases("small")])
def test_event_stream_is_unchanged(tmp_path, name, sim, board):
    kept = KEPT[name]
    path = golden.feed(tmp_path, name, sim, board)
    assert golden._sha(path.read_bytes()) == kept["feed"], \
        "the simulator wrote another feed for %s: regenerate the digests (tests/golden.py digests)" % name
    out = golden.replay(path, board, mpy=False)
    assert out.count(b"\n") == kept["lines"]
    assert golden._sha(out) == kept["events"]
