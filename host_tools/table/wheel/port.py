"""The wheel's serial port (USB or UART, or a pseudo-terminal): opened exclusively, its failures
said in words (`port_error`), `None` from `open()` meaning "not there yet" (the daemon tries again).
"""

from __future__ import annotations

import errno


# pyserial's message names the port three times ("could not open port P: [Errno 2] No such file or
# directory: 'P'"); the pit, the floor and `cylindre status` already name it: the cause in words.
PORT_ERRORS = {errno.ENOENT: "introuvable", errno.EACCES: "accès refusé (droits sur le port, groupe dialout ?)",
               errno.EBUSY: "occupé par un autre programme", errno.EAGAIN: "verrouillé par un autre programme",
               errno.ENXIO: "périphérique absent",
               errno.ENODEV: "périphérique absent", errno.EIO: "erreur d'entrée-sortie"}


def port_error(e) -> str:
    """Why a serial port did not open, short: 'introuvable (errno 2)'; other errors as they are."""
    code = getattr(e, "errno", None)
    return f"{PORT_ERRORS[code]} (errno {code})" if code in PORT_ERRORS else str(e)


class SerialPort:
    """pyserial for devices and pseudo-terminals; `None` from open() means "not there yet"."""

    def __init__(self, url, baud=115200, exclusive=True):
        self.url = url
        self.baud = baud
        self.exclusive = exclusive      # False: the caller already holds the port's lock (--port-fd)
        self.s = None

    def open(self):
        import serial
        try:
            # exclusive: a second process on the same port (another daemon, a terminal left open)
            # would take half of the wheel's bytes; it is refused instead, and said
            self.s = serial.serial_for_url(self.url, baudrate=self.baud, timeout=0.02, write_timeout=1.0,
                                           exclusive=self.exclusive)
            try:
                self.s.reset_input_buffer()     # bytes queued before we came belong to no session of ours
            except Exception:
                pass
            return True
        except (serial.SerialException, OSError, ValueError) as e:
            self.s = None
            self.error = port_error(e)
            return False

    def read(self):
        return self.s.read(self.s.in_waiting or 1)

    def write(self, data):
        if self.s is not None:
            self.s.write(data)

    def close(self):
        if self.s is not None:
            try:
                self.s.close()
            except Exception:
                pass
            self.s = None
