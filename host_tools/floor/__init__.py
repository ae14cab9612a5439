"""The casino floor service (`cylindre floor`): every table's events from NATS JetStream into one
store, the floor page, the statistics that follow each wheel, the gaming day's reports and the
commands sent from the floor to a table (docs/floor/index.md)."""
