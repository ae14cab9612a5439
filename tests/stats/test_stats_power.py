"""The statistics hold their level on a fair wheel and find planted biases at the sample sizes
docs/pit/statistics.md states (the full measurement: python -m host_tools.stats.power)."""

import math

from host_tools.stats import analysis, power, synth


def _within(rate, nominal, runs, k=3.0):
    return abs(rate - nominal) <= k * math.sqrt(nominal * (1 - nominal) / runs)


def test_a_fair_wheel_raises_false_alarms_at_the_nominal_rate():
    runs = 300
    chi05 = family05 = 0
    for r in range(runs):
        a = analysis.analyse(synth.play(400, seed=9000 + r), alpha=0.05)
        chi05 += a["numbers"]["p"] < 0.05
        family05 += bool(a["alarms"])
    assert _within(chi05 / runs, 0.05, runs)            # the chi-square alone: its nominal level
    assert family05 / runs <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / runs)   # Holm: at most alpha


def test_a_favoured_sector_is_found_in_5000_games():
    hits = sum("arc" in analysis.analyse(synth.play(5000, seed=500 + r, sector=(power.ARC5, 0.04)))["alarms"]
               for r in range(10))
    assert hits >= 8


def test_a_dealer_signature_is_found_in_1500_games_and_named():
    for r in range(5):
        a = analysis.analyse(synth.play(1500, seed=700 + r, dealer=("bruno", 10, 0.20, 2)))
        assert any(t.startswith("croupier:bruno:") for t in a["alarms"])
        assert not any(t.startswith(("croupier:ana:", "croupier:chloe:")) for t in a["alarms"])
        bruno = next(c for c in a["croupiers"] if c["croupier"] == "bruno")
        assert bruno["signature_peak"] in (9, 10, 11)
