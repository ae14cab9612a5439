"""Board files: every file in boards/ is valid, a board is data (the same firmware takes a
second wheel with other pins, encoder and sensors), and every mistake gets a clear message."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from cylindre.board.boardfile import check, spin_settings
from cylindre.spin.controller import Controller

BOARDS = sorted((Path(__file__).resolve().parents[2] / "boards").glob("*.json"))


def _load(name):
    return json.loads((BOARDS[0].parent / (name + ".json")).read_text())


@pytest.mark.parametrize("path", BOARDS, ids=lambda p: p.stem)
def test_board_file_is_valid_and_builds_a_controller(path):
    board = json.loads(path.read_text())
    assert check(board) is None
    assert board["board"] == path.stem
    events = []
    ctl = Controller(spin_settings(board), events.append)
    ctl.boot(0)
    assert events[0]["board"] == path.stem
    s = ctl.get_settings()
    assert s["cpr"] == board["cpr"] and s["pocket_sensors_deg"] == board["pocket_sensors_deg"]


def test_two_boards_two_wheels():
    a, b = _load("pico"), _load("pico2-3pockets")
    assert len(a["pocket_sensors_deg"]) == 1 and len(b["pocket_sensors_deg"]) == 3
    assert a["link"]["type"] == "usb" and b["link"]["type"] == "uart"
    assert a["cpr"] != b["cpr"]


MISTAKES = [
    (lambda b: b["pins"].update(enc_b=9), "adjacent"),
    (lambda b: b["pins"].update(ball=[6]), "pins.ball"),
    (lambda b: b["pins"].update(pocket=[8, 9]), "pins.pocket"),
    (lambda b: b["pins"].update(lamp=4), "already"),
    (lambda b: b["pins"].update(z=99), "GPIO"),
    (lambda b: b.update(cpr=1001), "cpr"),
    (lambda b: b.update(pocket_sensors_deg=[]), "pocket_sensors_deg"),
    (lambda b: b.update(spin={"min_laps": 0}), "min_laps"),
    (lambda b: b.update(spin={"colour": 1}), "unknown"),
    (lambda b: b.update(link={"type": "wifi"}), "link.type"),
    (lambda b: b.update(link={"type": "uart", "tx": 2, "rx": 1}), "link.tx"),
    (lambda b: b.pop("board"), "name"),
    (lambda b: b.pop("pins"), "pins"),
]


@pytest.mark.parametrize("mistake,words", MISTAKES)
def test_board_mistakes_are_named(mistake, words):
    b = copy.deepcopy(_load("pico"))
    mistake(b)
    err = check(b)
    assert err and words in err, err
