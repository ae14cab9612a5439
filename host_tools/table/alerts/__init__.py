"""The pit's alerts (alertes): the rules that raise them (pure) and their rows in the journal."""
