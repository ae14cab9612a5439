"""The link protocol's shared words (docs/integrators/link-protocol.md): event kinds, commands, the wheel's
history length and the status period. The wheel's controller, its link and the host's daemon all
import them from here, so neither end reaches into the other's internals.

Runs on MicroPython: plain constants only.
"""

try:
    from micropython import const
except ImportError:  # CPython
    const = int

HISTORY = const(10)         # games the controller keeps in flash and the `boot` event carries
STATUS_MS = const(500)      # the link sends a STATUS frame at least this often (a heartbeat),
CALLED_STATUS_MS = const(1000)  # or this often while the spin is called (CALLED_STATES):
                            # no bet can be taken on such a status, half the frames

# event kinds (`ev`), docs/integrators/wheel-events.md
BOOT = "boot"
LAUNCH = "launch"
RNVP = "rnvp"               # rien ne va plus: the wheel's call, the end of the betting window
DROP = "drop"
RESULT = "result"
VOID = "void"
FAULT = "fault"
STATUS = "status"
EVICTED = "evicted"

# controller states of a STATUS (`state`) in which the spin of the moment has been called
CALLED_STATES = ("no_more_bets", "ball_dropped")
# ... and those in which no bet is taken: called, or the wheel in fault (a sensor not `ok`: the
# next spin would be void, and a silent ball-track sensor may be hiding one under way)
NO_BETS_STATES = ("no_more_bets", "ball_dropped", "fault")

# commands the host may send (section 7)
COMMANDS = ("open_table", "close_table", "call", "get_settings", "set_setting", "status", "history", "set_time")
