"""The rules of the house (French roulette, single zero), shared by the Pico and the host.

One concept a module: `wheel` (cylindre: order, colours, sectors), `layout` (tableau: which
combinations exist), `bets` (validated stakes), `annonces` (called bets), `limits`, `prison`
(even chances at zero), `replay` (refaire / compléter / par le tout), `settle` (one spin),
`session` (spins in a row), `annonce_fr` (what the croupier says). Money is integer cents.
"""
