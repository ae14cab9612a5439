"""Cylindre firmware package: shared by the Pico and the host."""
