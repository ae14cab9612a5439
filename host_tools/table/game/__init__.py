"""The game and its ledger (le jeu et le registre): the betting window and the spin's life, the bets on the layout, settlement exactly once, the limits, group commit."""
