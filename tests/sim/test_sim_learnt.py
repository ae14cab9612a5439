"""The bench judges the drop prediction overall and from the 20th spin of a wheel (issue 13)."""

from host_tools.sim.analysis import LEARNT_FROM, aggregate


def _rec(spin, err_us):
    return {"spin": spin, "valid": True, "outcome": "correct", "fault": None, "truth_number": 1,
            "number": 1, "labels": [], "pred_error_us": err_us}


def test_the_first_spins_of_a_wheel_count_overall_but_not_once_learnt():
    recs = [_rec(s, 900_000 if s < LEARNT_FROM else -100_000) for s in range(1, 51)]
    e = aggregate(recs)["rnvp_error_us"]
    assert e["n"] == 50 and e["abs_max"] == 900_000
    assert e["learnt"]["n"] == 50 - LEARNT_FROM + 1
    assert e["learnt"]["abs_max"] == 100_000 and e["learnt"]["abs_p99"] == 100_000
