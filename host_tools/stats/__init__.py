"""Wheel statistics from the journal: integrity tests, plots and the PDF report (`cylindre stats`)."""
