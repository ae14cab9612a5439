"""`cylindre demo`: one table (table.py) or a casino floor of several (floor.py) on one machine, no hardware."""
