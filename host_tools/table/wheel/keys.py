"""Per-wheel link keys (clés de liaison): one 32-byte secret per wheel, never committed.

A key file holds 64 hexadecimal characters (and an optional trailing newline). The host keeps it
(e.g. `keys/T1.key`, mode 0600); the flash step copies the same file to the Pico as `/wheel.key`.
A key file that its group or other users may read or write is refused, as ssh refuses a key.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from cylindre.link.mac import parse_key

KEY_BYTES = 32


class KeyError_(ValueError):
    pass


def private(path: str | Path) -> None:
    """Raise KeyError_ if the group or other users have any access to the file (POSIX modes)."""
    p = Path(path)
    try:
        mode = p.stat().st_mode & 0o777
    except FileNotFoundError:
        raise KeyError_(f"key file {p} does not exist (make one: cylindre daemon --new-key {p})") from None
    except OSError as e:
        raise KeyError_(f"key file {p} cannot be read: {e}") from None
    if os.name == "posix" and mode & 0o077:
        raise KeyError_(f"key file {p} has mode {mode:04o}: others may read it; refused (chmod 600 {p})")


def secure_file(path: str | Path, mode: int = 0o600) -> None:
    """Narrow a file the daemon writes (journal and its -wal/-shm, log) to `mode`, if it exists."""
    for q in (Path(path), Path(f"{path}-wal"), Path(f"{path}-shm")):
        try:
            if q.exists() and (q.stat().st_mode & 0o777) & ~mode:
                os.chmod(q, mode)
        except OSError:
            pass


def load_key(path: str | Path, check_mode: bool = True) -> bytes:
    p = Path(path)
    if check_mode:
        private(p)
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
