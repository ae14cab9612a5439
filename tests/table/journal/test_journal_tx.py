"""The journal's transaction (`Journal.tx`), on which every change of the table stands: whole or
nothing, nested blocks in one, the world told after the COMMIT only."""

import threading

import pytest

from host_tools.table.journal.store import Journal


def test_a_transaction_commits_whole_or_not_at_all_and_tells_the_world_after_it(tmp_path):
    """Journal.tx: inner blocks join the outer one; an error anywhere rolls the whole back and
    drops what was to be said after it; what was said comes after the COMMIT, once; the lock is
    free after each, whatever happened (another thread can open one)."""
    j = Journal(tmp_path / "j.sqlite")
    j.db.execute("CREATE TABLE t (v INTEGER)")
    said = []
    with j.tx() as db:
        db.execute("INSERT INTO t VALUES (1)")
        with j.tx() as inner:
            inner.execute("INSERT INTO t VALUES (2)")
            j.after_commit(lambda: said.append(sorted(r[0] for r in j.db.execute("SELECT v FROM t"))))
        assert said == []                                  # not before the outer COMMIT
    assert said == [[1, 2]]
    with pytest.raises(ZeroDivisionError):
        with j.tx() as db:
            db.execute("INSERT INTO t VALUES (3)")
            j.after_commit(lambda: said.append("never"))
            with j.tx():
                1 / 0
    assert [r[0] for r in j.db.execute("SELECT v FROM t ORDER BY v")] == [1, 2] and said == [[1, 2]]
    with pytest.raises(Exception):
        with j.tx() as db:
            db.execute("INSERT INTO nowhere VALUES (1)")
    opened = []

    def other():
        with j.tx() as db:
            opened.append(db.execute("SELECT COUNT(*) FROM t").fetchone()[0])

    t = threading.Thread(target=other)
    t.start()
    t.join(5)
    assert opened == [2]                                   # the lock was free
    j.close()
