"""Cylindre host tools (CPython)."""
