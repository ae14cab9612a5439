"""The JetStream stream `CYLINDRE` (every table's events) and the key-value bucket `cylindre_tables`
(each table's last state), created by whichever side connects first, idempotently.

The stream keeps 30 days (limits retention, file storage) and drops a resend within 2 hours by
its `Nats-Msg-Id` (`duplicate_window`): a table resends at most what it sent without a PubAck,
which an outage longer than that window still finds, unacknowledged, in the table's journal
and is dropped by the floor's store on (table, event id) (docs/floor/messages.md).

What a table's own credentials could do to the others through the two: both refuse the
`Nats-Rollup` header (a rollup "all" on a table's own key would purge every other table's key) and
the JetStream API's message deletion and purge (`deny_delete`, `deny_purge`).

An existing stream or bucket is never changed without being asked: its replicas are never lowered,
and a configuration that differs from this one is reported (`Ensured.differences`) and applied only
with `update` (`cylindre floor --update-broker`), keeping the higher replica count. A cluster's
floor asks for `replicas` 3 (`cylindre floor --replicas 3`): a stream or bucket with fewer is raised.
"""

from __future__ import annotations

from host_tools.floor.link.envelope import KINDS, PREFIX

STREAM = "CYLINDRE"
# each kind a table publishes, not `cylindre.>`: a command (`cylindre.<site>.<table>.cmd`, a
# request) caught by the stream would be answered by JetStream's PubAck before the table answers
SUBJECTS = [f"{PREFIX}.*.*.{kind}" for kind in KINDS]
DUPLICATE_WINDOW_S = 2 * 3600
MAX_AGE_S = 30 * 86400
BUCKET = "cylindre_tables"
KV_STREAM = f"KV_{BUCKET}"
KV_SUBJECT_PREFIX = f"$KV.{BUCKET}."
KV_MAX_VALUE = 64 * 1024                # a table's state is about a kilobyte
# the settings that keep one table's credentials from reaching the others' data (both streams)
GUARDS = {"allow_rollup_hdrs": False, "deny_delete": True, "deny_purge": True}
COMPARED = ("subjects", "retention", "storage", "max_age", "duplicate_window", "max_msgs_per_subject",
            "max_msg_size", "discard", "allow_direct") + tuple(GUARDS)


def stream_config(replicas: int = 1):
    """The stream's configuration (replicas 3 on the production cluster)."""
    from nats.js.api import RetentionPolicy, StorageType, StreamConfig
    return StreamConfig(name=STREAM, subjects=list(SUBJECTS), retention=RetentionPolicy.LIMITS,
                        storage=StorageType.FILE, max_age=MAX_AGE_S, duplicate_window=DUPLICATE_WINDOW_S,
                        num_replicas=replicas, description="Cylindre: every table's journaled events", **GUARDS)


def bucket_config(replicas: int = 1):
    """The bucket's stream as nats-py's `create_key_value` makes it (history 1), without the rollup
    header KV buckets otherwise allow: a table's put may replace its own key's value, nothing more."""
    from nats.js.api import DiscardPolicy, StorageType, StreamConfig
    return StreamConfig(name=KV_STREAM, subjects=[f"$KV.{BUCKET}.>"], max_msgs_per_subject=1,
                        discard=DiscardPolicy.NEW, storage=StorageType.FILE, num_replicas=replicas,
                        duplicate_window=120, allow_direct=True, max_msg_size=KV_MAX_VALUE, max_consumers=-1,
                        max_msgs=-1, description="Cylindre: each table's last state", **GUARDS)


class Ensured:
    """What `ensure_stream`/`ensure_bucket` found and did: `info` (StreamInfo), `created`,
    `changed` (updated on request or to raise its replicas), `differences` (field: (theirs, ours))
    left as they are, and the replicas in force."""

    def __init__(self, info, created=False, changed=False, differences=None):
        self.info, self.created, self.changed = info, created, changed
        self.differences = dict(differences or {})

    @property
    def replicas(self) -> int:
        return int(self.info.config.num_replicas or 1)

    def warnings(self) -> list[str]:
        name = self.info.config.name
        out = []
        for field, (theirs, ours) in sorted(self.differences.items()):
            why = " (a table's credentials could reach the other tables' data)" if field in GUARDS else ""
            out.append(f"{name}: {field} is {theirs!r}, the floor's is {ours!r}{why}; --update-broker applies it")
        return out


def _value(v):
    return getattr(v, "value", v)


def differences(existing, wanted) -> dict:
    """{field: (existing, wanted)} of the compared fields (an unset field compares as its default)."""
    defaults = {"allow_rollup_hdrs": False, "deny_delete": False, "deny_purge": False, "allow_direct": False,
                "max_msgs_per_subject": -1, "max_msg_size": -1}
    out = {}
    for f in COMPARED:
        a, b = _value(getattr(existing, f, None)), _value(getattr(wanted, f, None))
        if b is None:
            continue
        a = defaults.get(f) if a is None else a
        if f == "subjects":
            a, b = sorted(a or []), sorted(b)
        if isinstance(a, float) or isinstance(b, float):
            same = a is not None and abs(float(a) - float(b)) < 1e-6
        else:
            same = a == b
        if not same:
            out[f] = (a, b)
    return out


async def _ensure(js, name, make, replicas, update) -> Ensured:
    from nats.js.errors import NotFoundError
    try:
        info = await js.stream_info(name)
    except NotFoundError:
        info = None
    if info is None:
        try:
            return Ensured(await js.add_stream(make(replicas or 1)), created=True)
        except Exception as e:                 # noqa: BLE001 - made by the other side meanwhile: look again
            if getattr(e, "err_code", None) not in (10058, 10065):
                raise
            info = await js.stream_info(name)
    have = int(info.config.num_replicas or 1)
    keep = max(have, replicas or have)         # never lower; raised when asked for more
    wanted = _with_irreversible(make(keep), info.config)
    diff = differences(info.config, wanted)
    if keep > have or (update and diff):
        cfg = wanted if update else _with_replicas(info.config, keep)
        info = await js.update_stream(cfg)
        return Ensured(info, changed=True, differences=differences(info.config, wanted))
    return Ensured(info, differences=diff)


# settings the server refuses to turn off once on (nats-server 2.11+, "message TTL status can not
# be disabled"): nats-py 2.16's create_key_value turns on per-message TTLs, which on a table's own
# key reach only that key; an update keeps them as they are rather than fail
IRREVERSIBLE = ("allow_msg_ttl",)


def _with_irreversible(wanted, existing):
    """`wanted`, with the settings the server cannot turn off taken from `existing` where it has them on."""
    on = {f: True for f in IRREVERSIBLE if getattr(existing, f, None)}
    return wanted.evolve(**on) if on else wanted


def _with_replicas(config, replicas):
    """The existing configuration as it is, but for its replicas."""
    return config.evolve(num_replicas=replicas)


async def ensure_stream(js, replicas: int | None = None, update: bool = False) -> Ensured:
    """The stream, created if it is missing (with `replicas`, else 1). An existing one keeps its
    configuration unless `update`, and its replicas unless `replicas` asks for more. A table whose
    NATS user may not create streams is refused and goes on: the floor creates it."""
    return await _ensure(js, STREAM, stream_config, replicas, update)


async def ensure_bucket(js, replicas: int | None = None, update: bool = False):
    """The key-value bucket of last states (history 1), created if missing, as `ensure_stream`;
    returns nats-py's KeyValue (with the `Ensured` as its `ensured`)."""
    ensured = await _ensure(js, KV_STREAM, bucket_config, replicas, update)
    kv = await js.key_value(BUCKET)
    kv.ensured = ensured
    return kv


def kv_key(site: str, table: str) -> str:
    """The bucket's key of a table: `<site>.<table>`."""
    from host_tools.floor.link.envelope import check_token
    return f"{check_token(site, 'site')}.{check_token(table, 'table')}"
