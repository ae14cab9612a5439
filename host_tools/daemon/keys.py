"""Per-wheel link keys (clés de liaison): one 32-byte secret per wheel, never committed.

A key file holds 64 hexadecimal characters (and an optional trailing newline). The host keeps it
(e.g. `keys/T1.key`, mode 0600); the flash step copies the same file to the Pico as `/wheel.key`.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from cylindre.link.mac import parse_key

KEY_BYTES = 32


class KeyError_(ValueError):
    pass


def load_key(path: str | Path) -> bytes:
    p = Path(path)
    try:
        text = p.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        raise KeyError_(f"key file {p} does not exist (make one: cylindre daemon --new-key {p})") from None
    except (OSError, UnicodeDecodeError) as e:
        raise KeyError_(f"key file {p} cannot be read: {e}") from None
    try:
        return parse_key(text)      # the same reading as the Pico's
    except ValueError as e:
        raise KeyError_(f"key file {p}: {e}") from None


def new_key(path: str | Path) -> bytes:
    """Write a fresh random key (refuses to overwrite one)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_bytes(KEY_BYTES)
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(key.hex() + "\n")
    return key
