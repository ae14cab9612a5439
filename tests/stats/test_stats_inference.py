"""The distributions and tests under the wheel statistics, against tabulated values."""

import math
import random

import pytest

from host_tools.stats import inference as I


@pytest.mark.parametrize("x, df, p", [
    (50.998, 36, 0.05), (58.619, 36, 0.01), (35.336, 36, 0.5),     # chi-square table, 36 df
    (3.841, 1, 0.05), (6.635, 1, 0.01), (18.307, 10, 0.05), (2.558, 10, 0.99),
])
def test_chi_square_tail_matches_the_table(x, df, p):
    assert I.chi2_sf(x, df) == pytest.approx(p, abs=2e-4)


def test_normal_two_sided_tail():
    assert I.normal_sf2(1.959964) == pytest.approx(0.05, abs=1e-6)
    assert I.normal_sf2(-2.575829) == pytest.approx(0.01, abs=1e-6)


def test_chi_square_of_equal_counts_is_zero_and_of_one_hot_cell_is_large():
    assert I.chi_square_uniform([10] * 37) == (0.0, 36, 1.0)
    stat, df, p = I.chi_square_uniform([10] * 36 + [60])
    e = 420 / 37
    assert df == 36 and stat == pytest.approx((60 - e) ** 2 / e + 36 * (10 - e) ** 2 / e)
    assert p < 1e-6


def test_runs_test_by_hand():
    runs, z, p = I.runs_test("RRNNNR")          # n1 = n2 = 3: mean 4 runs, variance 1.2
    assert runs == 3 and z == pytest.approx(-1 / math.sqrt(1.2))
    assert I.longest_run("RRNNNR") == ("N", 3)


def test_holm_step_down():
    adj = I.holm({"a": 0.01, "b": 0.04, "c": 0.03, "d": 0.005})
    assert adj == pytest.approx({"d": 0.02, "a": 0.03, "c": 0.06, "b": 0.06})


def test_rayleigh_holds_its_level_on_uniform_angles_and_sees_a_preferred_one():
    rng = random.Random(5)
    below = sum(I.rayleigh([rng.uniform(0, 2 * math.pi) for _ in range(40)])[2] < 0.05 for _ in range(2000))
    assert 0.035 < below / 2000 < 0.065          # 0.05 ± 3.1 standard errors
    r, mean, p = I.rayleigh([rng.gauss(1.0, 0.5) for _ in range(40)])
    assert p < 1e-6 and mean == pytest.approx(1.0, abs=0.3)
