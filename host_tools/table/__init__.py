"""The table host (`cylindre daemon`), in rooms by concern: the link to the wheel (wheel/), the game
and its ledger (game/), the journal and its audit (journal/), the pit's alerts (alerts/), the HTTP
API and its pages (api/), the floor's side of the table (floor/) and the daemon that runs them all
(daemon/); its settings (config.py) and its French words (libelles.py) serve every room.
docs/internals/architecture.md draws them and says which may import which."""
