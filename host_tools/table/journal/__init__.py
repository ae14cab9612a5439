"""The journal and its audit (le journal): the SQLite source of truth, the published events, the audit trail, the journal's identity on the floor."""
