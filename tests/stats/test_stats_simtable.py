"""The statistics on a journal written by a simulated table (the firmware's code on the simulated
board, the real link, the real daemon; croupiers rotating on duty), not a synthetic one: the
simulator's `biased` wheel (17 takes 5 % more of the games) is found by the arc test, on the
numbers the wheel reported and the daemon journaled."""

import pytest

from host_tools.stats import analysis, games
from host_tools.sim.simtable import run_table

pytestmark = pytest.mark.slow


def test_a_biased_wheel_on_a_simulated_table_is_found(tmp_path):
    path = tmp_path / "journal.sqlite"
    played, counts = run_table(path, 300, seed=2, wheel="biased", rotate=100)
    assert played == 300 and counts["events"] > 0
    a = analysis.analyse(games.read(path, "T1"))
    assert a["games"] == 300
    assert {c["croupier"]: c["games"] for c in a["croupiers"]} == {"Anne": 100, "Marc": 100, "Paul": 100}
    assert "arc" in a["alarms"], a["family"][:3]
    assert 17 in a["arc"]["numbers"], a["arc"]                  # the hot arc holds the favoured pocket
