"""The wheel the table knows, as pure rules (identity.py): who is taken without asking, who waits
for a chef, and where a new counter's spins start among the table's."""

from host_tools.table.wheel import identity as I


def _seen(serial="s1", epoch="e1", spin=5, key="k1"):
    return {"wheel": "T1", "serial": serial, "epoch": epoch, "key": key, "spin": spin}


def _known(serial="s1", epoch="e1", key="k1", base=0):
    return {"wheel": "T1", "serial": serial, "epoch": epoch, "key": key, "base": base}


def test_the_first_wheel_of_a_new_table_is_taken():
    assert I.judge(None, _seen(spin=0), None) == ("adopt", [])


def test_a_journal_without_wheels_takes_a_counter_that_goes_on_and_not_one_that_went_back():
    assert I.judge(None, _seen(spin=40), 40) == ("adopt", [])
    verdict, diffs = I.judge(None, _seen(spin=0), 40)
    assert verdict == "unknown" and diffs == ["compteur de coups à 0, la table en est au coup 40"]


def test_the_same_wheel_is_the_same_and_an_older_firmware_that_says_less_too():
    assert I.judge(_known(), _seen(spin=9), 9) == ("same", [])
    assert I.judge(_known(), _seen(serial=None, epoch=None, spin=None), 9) == ("same", [])
    assert I.judge(_known(serial=None, epoch=None), _seen(spin=9), 9) == ("adopt", [])


def test_another_board_key_epoch_or_a_counter_gone_back_waits_for_the_chef():
    assert I.judge(_known(), _seen(serial="s2"), 5)[0] == "unknown"
    assert "autre clé" in I.judge(_known(), _seen(key="k2"), 5)[1][0]
    assert "remis à zéro" in I.judge(_known(), _seen(epoch="e2", spin=0), 5)[1][0]
    assert "revenu à 3" in I.judge(_known(), _seen(spin=3), 5)[1][0]
    # a counter of a later epoch judged against its own base
    assert I.judge(_known(epoch="e2", base=40), _seen(epoch="e2", spin=2), 42) == ("same", [])


def test_a_new_counter_numbers_on_after_the_table_and_a_new_key_keeps_its_base():
    assert I.base_for(_known(), _seen(epoch="e2", spin=0), 40) == 40
    assert I.base_for(_known(base=7), _seen(key="k2", spin=33), 40) == 7
    assert I.base_for(None, _seen(spin=0), None) == 0


def test_events_are_renumbered_as_the_table_numbers_them():
    ev = {"ev": "boot", "spin": 2, "interrupted": 3, "history": [{"spin": 1, "number": 5}, {"spin": 2, "number": 0}]}
    out = I.to_table(ev, 40)
    assert out == {"ev": "boot", "spin": 42, "interrupted": 43, "wheel_spin": 2,
                   "history": [{"spin": 41, "number": 5}, {"spin": 42, "number": 0}]}
    assert I.to_table(ev, 0) is ev
    assert I.fingerprint(bytes(32)) == I.fingerprint(bytes(32)) != I.fingerprint(bytes(range(32)))


def test_the_counter_difference_is_said_per_case_a_reset_counter_or_an_earlier_controller_put_back():
    """Before: an earlier controller put back (its epoch known before, its counter at 26) was
    said "compteur de coups remis à zéro" like a wiped flash."""
    reset = I.judge(_known(epoch="e2"), _seen(epoch="e3", spin=0), 30, past_epochs=("e1", "e2"))[1][0]
    assert reset.startswith("compteur de coups remis à zéro (nouvelle époque e3")
    back = I.judge(_known(epoch="e2"), _seen(epoch="e1", spin=26), 30, past_epochs=("e1", "e2"))[1][0]
    assert "remis à zéro" not in back and back.startswith("un contrôleur d'avant remis en place (époque e1")
    assert "compteur à 26" in back
    other = I.judge(_known(epoch="e2"), _seen(epoch="e7", spin=12), 30, past_epochs=("e1", "e2"))[1][0]
    assert "remis à zéro" not in other and other.startswith("un autre compteur de coups (époque e7, à 12")
