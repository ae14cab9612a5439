"""The JetStream stream `CYLINDRE` (every table's events) and the key-value bucket `cylindre_tables`
(each table's last state), created by whichever side connects first, idempotently.

The stream keeps 30 days (limits retention, file storage) and drops a resend within 2 hours by
its `Nats-Msg-Id` (`duplicate_window`): a table resends at most what it sent without a PubAck,
which an outage longer than that window still finds, unacknowledged, in the table's journal
and is dropped by the floor's store on (table, event id) (docs/floor/messages.md).
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
KV_SUBJECT_PREFIX = f"$KV.{BUCKET}."


def stream_config(replicas: int = 1):
    """The stream's configuration (replicas 3 on the production cluster)."""
    from nats.js.api import RetentionPolicy, StorageType, StreamConfig
    return StreamConfig(name=STREAM, subjects=list(SUBJECTS), retention=RetentionPolicy.LIMITS,
                        storage=StorageType.FILE, max_age=MAX_AGE_S, duplicate_window=DUPLICATE_WINDOW_S,
                        num_replicas=replicas, description="Cylindre: every table's journaled events")


async def ensure_stream(js, replicas: int = 1, update: bool = True):
    """Create the stream if it is missing; an existing one with another configuration is updated
    (`update`) or left as it is. Returns its StreamInfo. A table whose NATS user may not create
    streams calls it with update=False and goes on if it is refused: the floor creates it."""
    from nats.js.errors import BadRequestError
    config = stream_config(replicas)
    try:
        return await js.add_stream(config)
    except BadRequestError as e:
        if getattr(e, "err_code", None) != 10058:   # "stream name already in use with a different configuration"
            raise
    return await (js.update_stream(config) if update else js.stream_info(STREAM))


async def ensure_bucket(js, replicas: int = 1):
    """The key-value bucket of last states (history 1: a key holds its last value), created if
    missing; returns nats-py's KeyValue."""
    from nats.js.errors import BucketNotFoundError, NotFoundError
    try:
        return await js.key_value(BUCKET)
    except (BucketNotFoundError, NotFoundError):
        pass
    from nats.js.api import KeyValueConfig, StorageType
    return await js.create_key_value(KeyValueConfig(bucket=BUCKET, history=1, storage=StorageType.FILE,
                                                    replicas=replicas, description="Cylindre: each table's last state"))


def kv_key(site: str, table: str) -> str:
    """The bucket's key of a table: `<site>.<table>`."""
    from host_tools.floor.link.envelope import check_token
    return f"{check_token(site, 'site')}.{check_token(table, 'table')}"
