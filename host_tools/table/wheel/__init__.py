"""The link to the wheel, seen from the table (la liaison): the wheel's keys, its clock, its identity at the table, what the host sees of it, and a Cammegh reader as a source."""
