"""The stand-in wheel of the table's tests lives in host_tools/sim/tablewheel.py (the bench drives
a table with it too); import it from there. This name stays for tests written before it moved."""

from host_tools.sim.tablewheel import Clock, Wheel, game  # noqa: F401
