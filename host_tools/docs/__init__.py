"""Generated parts of the documentation (the licences' table)."""
