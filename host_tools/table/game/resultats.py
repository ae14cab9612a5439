"""A spin's results as the journal keeps them: in columns (format 5 of `spin_results`), and as
rows (format 4, `result_rows`) for what the columns cannot hold.

At 10,000 bets, writing the results as JSON rows (format 4) cost more than the rest of the
result's path: a tuple and a list per bet, 300 kB of text encoded in Python. Format 5 writes the
columns the settlement computed (`reglement.Reglement`) as they are, each as fixed-width ASCII
decimals in one BLOB (`spin_results.data`): NumPy turns a column into digits in one operation,
and SQLite reads a value back with `substr` and `CAST` at its offset, so the view `all_results`
still shows every result as a row and an auditor's SQL works as before.

    spin_results.rows   JSON: {"n": results, "c": {column: [offset, width]}, "p": payments,
                               "pc": {column: [offset, width]}}
    spin_results.data   the columns one after the other: per result `id` (ASCII, space-padded),
                        `label` (its `result_labels` id), `staked`, `outcome` (OUTCOMES index),
                        `won`, `returned`, `lost`, `imprisoned`, `more` (0, or k + 1: row k of
                        `result_mores`); per payment `bet` (the result's position), `label`
                        ((kind, combination) in `result_labels`), `stake`, `won`
    result_mores        (wheel, spin, k, more): the JSON `more` of the few results that have one
                        (an excess, a prison, a replay, a carried bet) and one per called bet's
                        (shape, unit): every call with the same shape and unit says the same

Rows past the spin's bets are the stakes carried en prison, as in the other formats. `pack`
answers None for what it cannot write so (a negative amount, an id that is not plain ASCII):
the ledger then writes format 4 (`result_rows`).
"""

from __future__ import annotations

import json
from itertools import compress
from operator import add

import numpy as np
import numpy.ma  # noqa: F401  (np.unique imports it at its first call: 100 ms on the first result's path otherwise)

from cylindre.rules.compiled import Book

from host_tools.table.game.reglement import OUTCOMES, REGISTRY, settle
from host_tools.table.game.prisonniers import Carried

COLUMNS = ("id", "label", "staked", "outcome", "won", "returned", "lost", "imprisoned", "more")
PAY_COLUMNS = ("bet", "label", "stake", "won")
BASE = ("id", "type", "label", "staked", "outcome", "won", "returned", "lost", "imprisoned", "paid")
MAX_WIDTH = 18          # digits: every amount below 10**18 (a stake is at most 10**12 cents)


def _digits(a):
    """Column `a` (non-negative int64) as fixed-width ASCII digits: (bytes, width). One pass of
    array arithmetic per digit (in 32 bits when the column fits)."""
    top = int(a.max()) if len(a) else 0
    w = max(1, len(str(top)))
    if w > MAX_WIDTH:
        raise ValueError("amount too large for format 5")
    out = np.empty((len(a), w), np.uint8)
    d = a.astype(np.uint32) if top < 2 ** 32 else a.copy()
    for j in range(w - 1, -1, -1):
        q = d // 10
        out[:, j] = d - q * 10 + 48
        d = q
    return out.tobytes(), w


def _undigits(data, off, w, n):
    if n == 0:
        return []
    m = np.frombuffer(data, dtype=np.uint8, count=n * w, offset=off).reshape(n, w).astype(np.int64) - 48
    return (m @ (10 ** np.arange(w - 1, -1, -1, dtype=np.int64))).tolist()


def _text(ids):
    """Ids as fixed-width ASCII, space-padded: (bytes, width), or None if one is not plain
    printable ASCII without spaces."""
    joined = "".join(ids)
    if not joined.isascii() or not joined.isprintable() or " " in joined:
        return None
    lengths = set(map(len, ids))
    if len(lengths) == 1:                       # the table's ids: all of one length
        return joined.encode("ascii"), max(1, lengths.pop())
    arr = np.array(ids, dtype="S")
    return arr.tobytes().replace(b"\0", b" "), max(1, arr.dtype.itemsize)


def pack(done, label_id, labels_of):
    """Format 5 of a `Reglement`: (header, data, mores, settled ids) for the ledger, or None if
    it cannot be written so. `label_id(type, label)` names a (type, label) pair by its id,
    `labels_of(pairs)` the registry's pairs (an array of REGISTRY.pair numbers) likewise."""
    book = done.book
    n = len(book)
    ids = list(book.ids)
    gid = done.a_gid
    gpair = np.array(REGISTRY.gpair, dtype=np.int64) if n else np.zeros(0, np.int64)    # a copy: a view would pin the growing array
    label = labels_of(gpair[gid]) if n else np.zeros(0, np.int64)
    is_call = np.frombuffer(REGISTRY.gcall, dtype=np.int8, count=len(REGISTRY.gcall))[gid] != 0 if n \
        else np.zeros(0, bool)
    more = np.zeros(n, np.int64)
    mores = _Mores()
    full = set(np.flatnonzero(done.a_excess).tolist())
    full.update(done.extra)
    full.update(book.carried)
    if full:
        simple = REGISTRY.numbers[done.number].tables()["simple"][gid].tolist()    # even chances, by bet
        excess = set(np.flatnonzero(done.a_excess).tolist())
        extra, marked, row, kept = done.extra, book.carried, mores.row, _KEPT
        where = sorted(full)
        ks = []
        for i in where:                 # a zero's 1,500 prisoners: one of a few texts, looked up
            text = None
            q = extra.get(i)
            if q is not None and simple[i] and i not in excess and not marked.get(i):
                text = kept.get(("prison", q.get("chance"), q.get("wins_needed"))) or _prison_more(done, i)
            if text is None:
                text = _more_text(done.result(i))
            k = row.get(text)
            ks.append(k if k is not None else mores.add(text))
        more[where] = ks
    if is_call.any():
        if full:
            is_call[list(full)] = False
        where = np.flatnonzero(is_call)
        if len(where):
            pairs = gid[where] * (1 << 40) + done.a_mult[where]         # (shape, unit): one `more` each
            uniq, first, back = np.unique(pairs, return_index=True, return_inverse=True)
            ks = np.array([mores.add(_call_more(done, int(where[j]))) for j in first.tolist()], dtype=np.int64)
            more[where] = ks[back]
    cols = {"id": ids, "label": label, "staked": done.a_staked, "outcome": done.a_outcome.astype(np.int64),
            "won": done.a_won, "returned": done.a_returned, "lost": done.a_lost, "imprisoned": done.a_imprisoned,
            "more": more}
    carried = done.carried_results
    if carried:
        # column by column (a zero's 1,500 prisoners are carried to the next spin)
        if isinstance(carried, Carried):
            extra = _carried_columns(carried, label_id, mores)
        else:
            labels = {tl: label_id(*tl) for tl in {(r["type"], r["label"]) for r in carried}}
            extra = {"id": [str(r["id"]) for r in carried],
                     "label": [labels[(r["type"], r["label"])] for r in carried],
                     "outcome": [_CODES.get(r["outcome"], -1) for r in carried],
                     "more": [mores.add(_carried_more(r)) for r in carried]}
            for k in ("staked", "won", "returned", "lost", "imprisoned"):
                extra[k] = [r[k] for r in carried]
        if -1 in extra["outcome"]:
            return None                 # an outcome the columns have no code for: format 4
        cols["id"] = ids + extra["id"]
        for k in COLUMNS[1:]:
            cols[k] = np.concatenate((cols[k], np.array(extra[k], dtype=np.int64)))
    pays = _payments(done, labels_of)
    data = []
    header = {"n": n + len(carried), "c": {}, "p": len(pays["bet"]), "pc": {}}
    off = 0
    try:
        for name, table, source in (("c", COLUMNS, cols), ("pc", PAY_COLUMNS, pays)):
            for k in table:
                v = source[k]
                if k == "id":
                    enc = _ids_text(done, ids, v)
                    if enc is None:
                        return None
                    b, w = enc
                else:
                    v = np.asarray(v, dtype=np.int64)
                    if len(v) and int(v.min()) < 0:
                        return None
                    b, w = _digits(v)
                header[name][k] = [off, w]
                data.append(b)
                off += len(b)
    except ValueError:
        return None
    settled = [ids[i] for i in range(n) if i not in book.carried] if book.carried else ids
    return json.dumps(header, separators=(",", ":")), b"".join(data), list(mores), settled


def _ids_text(done, ids, every):
    """The id column's text (`_text(every)`): the book's part as its columns kept it while the
    bets were placed (reglement.Colonnes.id_text), the carried prisoners' after it."""
    kept = done.cols.id_text(ids) if done.cols is not None else None
    if kept is None:
        return _text(every)
    if len(every) == len(ids):
        return kept
    rest = _text(every[len(ids):])
    if rest is None or rest[1] != kept[1]:
        return _text(every)
    return kept[0] + rest[0], kept[1]


class _Mores(list):
    """The spin's `result_mores` rows: each text once; the results that say the same share its row."""

    def __init__(self):
        super().__init__()
        self.row = {}

    def add(self, text):
        """The `more` column's value for `text`: its row k + 1."""
        k = self.row.get(text)
        if k is None:
            self.append(text)
            k = self.row[text] = len(self)
        return k


def _more_text(r):
    m = {k: v for k, v in r.items() if k not in BASE}
    return json.dumps(m, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


_CALLS = {}             # (shape, unit, number) -> a plain called bet's `more` (JSON text)
_KEPT = {}              # a prisoner's `more` by what it holds: a zero imprisons 1,500 stakes alike
MAX_CALLS = 50000


def _remember(cache, key, make):
    text = cache.get(key)
    if text is None:
        if len(cache) >= MAX_CALLS:
            cache.clear()
        text = cache[key] = make()
    return text


MAX_WARM = 128          # (shape, unit) pairs of plain called bets warmed at a call, at most (the bench's
                        # 10,000 mixed bets hold 74: 67 ms at a call, once; a number warmed is not again)


def warm_calls(cols) -> int:
    """The `more` of every plain called bet on the layout (a voisins du zéro of 2 €...), made for
    every number now: at the wheel's call, while the ball runs, rather than on the result's path
    (a number not seen yet with that shape and unit cost 1.8 ms of the step at 10,000 bets).
    `cols`: the locked book's columns (reglement.Colonnes). Made by the same settlement as on the
    result's path, of a book holding one bet of each (shape, unit). Answers how many were made."""
    if cols is None or not len(cols) or cols.epoch != REGISTRY.epoch:
        return 0
    # copies, not views: a view pins the columns' arrays, which grow (a carried bet is added)
    g = np.array(cols.gidx, dtype=np.int64)
    called = np.array(REGISTRY.gcall, dtype=np.int8)[g] != 0
    called &= np.array(cols.excess, dtype=np.int64) == 0
    if not called.any():
        return 0
    pairs = np.unique(g[called] * (1 << 40) + np.array(cols.mult, dtype=np.int64)[called])
    shapes = REGISTRY.shapes
    todo = [(shapes[int(p) >> 40], int(p) & ((1 << 40) - 1)) for p in pairs]
    # a call with a replay (refaire, compléter) settles with its bet's own dict: not a plain call
    todo = [(shape, unit) for shape, unit in todo if shape.replay is None][:MAX_WARM]
    if not todo:
        return 0
    book = Book()
    for k, (shape, unit) in enumerate(todo):
        book.add_compiled("w%d" % k, shape, unit, 0)
    made = 0
    for number in range(37):
        if all((shape, unit, number) in _CALLS for shape, unit in todo):
            continue
        done = settle(book, number)
        for i, (shape, unit) in enumerate(todo):
            if i not in done.extra and (shape, unit, number) not in _CALLS:     # (a replay: not a plain call)
                _remember(_CALLS, (shape, unit, number), lambda: _more_text(done.result(i)))
                made += 1
    return made


def _call_more(done, i):
    """The `more` of called bet i, which has no excess, prison, replay nor carried mark: it
    depends on its shape, unit and the number alone, kept from one spin to the next."""
    key = (REGISTRY.shapes[int(done.a_gid[i])], int(done.a_mult[i]), done.number)
    return _remember(_CALLS, key, lambda: _more_text(done.result(i)))


def _prison_more(done, i):
    """The `more` of even chance i (no excess) imprisoned by this zero with no carried mark (the
    rules' result then adds its prison alone, `{"prison": {chance, wins_needed}}`), or None for
    any other: the rules' result is read for it. A zero imprisons every even chance on the
    layout; each one's result dict cost 20 µs."""
    q = done.extra.get(i)
    if q is None or done.book.carried.get(i):
        return None
    key = ("prison", q.get("chance"), q.get("wins_needed"))
    if type(key[1]) is not str or type(key[2]) is not int:
        return None
    return _remember(_KEPT, key, lambda: _more_text(done.result(i)))


def _carried_more(r):
    """The `more` of carried prisoner r (rules.settle.carried_prisoners: `carried`,
    `wins_needed_before` and, still imprisoned, its `prison`), kept by what it holds: a zero's
    1,500 prisoners say one of a few things. Anything else is written as it is."""
    c, w, q = r.get("carried"), r.get("wins_needed_before"), r.get("prison")
    if not (c is True and type(w) is int and r.keys() <= _CARRIED
            and (q is None or (type(q) is dict and q.keys() == _PRISON and type(q["chance"]) is str
                               and type(q["wins_needed"]) is int))):
        return _more_text(r)
    key = ("carried", w, None if q is None else (q["chance"], q["wins_needed"]))
    return _remember(_KEPT, key, lambda: _more_text(r))


def _carried_columns(c, label_id, mores):
    """The ledger's columns of the carried prisoners settled in columns (prisonniers.Carried):
    what `_carried_more` and the dicts' loop above give, read from its columns."""
    chances = c.chances
    labels = {ch: label_id(ch, "%s (en prison)" % ch) for ch in set(chances)}
    prison = c.prison
    more = []
    rows = {}                       # wins needed -> the row of those not imprisoned again: most of them
    for i, w in enumerate(c.before):
        q = prison.get(i) if prison else None
        k = rows.get(w) if q is None else None
        if k is None:
            key = ("carried", w, None if q is None else (q["chance"], q["wins_needed"]))
            text = _remember(_KEPT, key, lambda: _more_text(c[i]))
            k = mores.add(text)
            if q is None:
                rows[w] = k
        more.append(k)
    return {"id": [v if type(v) is str else str(v) for v in c.ids], "label": [labels[ch] for ch in chances],
            "outcome": [_CODES.get(o, -1) for o in c.outcomes], "more": more, "staked": c.stakes,
            "won": [0] * len(c), "returned": c.returned, "lost": c.lost, "imprisoned": c.imprisoned}


_CODES = {o: k for k, o in enumerate(OUTCOMES)}
_CARRIED = frozenset(BASE) | {"carried", "wins_needed_before", "prison"}
_PRISON = {"chance", "wins_needed"}


def _payments(done, labels_of):
    """The payment order as columns: the bet's position, the (kind, combination) label, the
    stake and the win of each entry (rules.settle.Settlement.payment, in columns)."""
    count = len(done.p_pos)
    if not count:
        return {k: np.zeros(0, np.int64) for k in PAY_COLUMNS}
    t = done.p_tables
    f = done.p_f
    simple = t["f_simple"][f]
    units = done.p_key                     # a chip's units times the bet's multiplier
    played = done.a_staked[done.p_pos] - done.a_excess[done.p_pos]
    stake = np.where(simple, played, units)
    won = np.where(simple, played, units * t["f_num"][f] // t["f_den"][f])
    return {"bet": done.p_pos, "label": labels_of(t["f_pair"][f]), "stake": stake, "won": won}


def one(header, data, bid, more, named):
    """Bet `bid`'s row (format 3) in a format 5 spin, or None: its place found in the ids'
    column (the first, a carried stake of the same id comes after), its fields read there;
    `more(k)` the JSON text of row k of the spin's `result_mores`."""
    h = json.loads(header)
    n, c = h["n"], h["c"]
    off, w = c["id"]
    want = bid.encode("ascii", "replace").ljust(w, b" ")
    if len(want) != w:
        return None
    at = off
    while True:
        at = data.find(want, at, off + n * w)
        if at < 0:
            return None
        if (at - off) % w == 0:
            break
        at += 1
    i = (at - off) // w
    f = {k: int(data[c[k][0] + i * c[k][1]: c[k][0] + (i + 1) * c[k][1]]) for k in COLUMNS[1:]}
    tl = named(f["label"])
    m = json.loads(more(f["more"] - 1) or "null") if f["more"] else None
    if (m or {}).get("carried"):
        return None
    return [bid, tl[0], tl[1], f["staked"], OUTCOMES[f["outcome"]], f["won"], f["returned"], f["lost"],
            f["imprisoned"], m]


def unpack(header, data, mores, named):
    """Format 5 back as rows of format 3 ([id, type, label, staked, outcome, won, returned, lost,
    imprisoned, more]) and the payment order as rows [id, kind, combination, stake, won];
    `mores` {k: JSON text}, `named(label id)` -> [type, label]."""
    h = json.loads(header)
    n, c = h["n"], h["c"]
    off, w = c["id"]
    ids = [x.decode() for x in np.frombuffer(data, dtype="S%d" % w, count=n, offset=off).tolist()] if n else []
    ids = [x.rstrip(" ") for x in ids]
    col = {k: _undigits(data, c[k][0], c[k][1], n) for k in COLUMNS[1:]}
    rows = []
    cache = {}
    for i in range(n):
        lab = col["label"][i]
        tl = cache.get(lab)
        if tl is None:
            tl = cache[lab] = named(lab)
        k = col["more"][i]
        rows.append([ids[i], tl[0], tl[1], col["staked"][i], OUTCOMES[col["outcome"][i]], col["won"][i],
                     col["returned"][i], col["lost"][i], col["imprisoned"][i],
                     json.loads(mores[k - 1]) if k else None])
    p, pc = h["p"], h["pc"]
    pcol = {k: _undigits(data, pc[k][0], pc[k][1], p) for k in PAY_COLUMNS}
    pays = []
    for j in range(p):
        kind, comb = named(pcol["label"][j])
        pays.append([ids[pcol["bet"][j]], kind, comb, pcol["stake"][j], pcol["won"][j]])
    return rows, pays


def result_rows(done, label_id):
    """Format 4, what the ledger writes when `pack` cannot: the `spin_results` rows of a `Settlement` (columns in, tuples out: no per-bet
    dict for the plain bets and even chances), and the ids of the bets it settled (those not
    carried); `label_id(type, label)` names a (type, label) pair by its id."""
    book = done.book
    ids, carried, excess, extra = book.ids, book.carried, book.excess, done.extra
    n = len(ids)
    mores = [None] * n
    full = set(compress(range(n), excess))      # the results whose `more` is result()'s
    full.update(extra)
    full.update(carried)
    labels = {}
    number = done.number
    for s, members in book.groups:       # what a shape says, once per shape
        labels[s] = label_id(s.chance if s.family == "simple" else s.type, s.label)
        if s.family == "annonce" and not (s.a_placer or s.winning[number]):
            for i in members:            # a call that won nothing: what result() would say
                mores[i] = {"chips": s.count, "unit": s.unit if s.unit is not None else book.mults[i], "winning": []}
        elif s.family == "annonce":
            full.update(members)
    for i in full:
        r = done.result(i)
        mores[i] = {k: v for k, v in r.items() if k not in BASE}
    staked = list(map(add, book.played, excess))
    rows = list(zip(ids, map(labels.__getitem__, book.shapes), staked,
                    done.outcome, done.won, done.returned, done.lost, done.imprisoned, mores))
    rows.extend(_row(r, label_id) for r in done.carried_results)
    settled = [ids[i] for i in range(n) if i not in carried] if carried else ids
    return rows, settled


def dict_rows(res, label_id):
    """The `spin_results` rows (format 4) of settle_spin's dict, and the ids of the bets it settled."""
    return ([_row(r, label_id) for r in res["results"]], [r["id"] for r in res["results"] if not r.get("carried")])


def _row(r, label_id):
    more = {k: v for k, v in r.items() if k not in BASE}
    return (str(r["id"]), label_id(r["type"], r["label"]), r["staked"], r["outcome"], r["won"], r["returned"],
            r["lost"], r["imprisoned"], more or None)
