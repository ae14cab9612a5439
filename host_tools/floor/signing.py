"""The floor's signature on its reports: Ed25519, a detached signature file beside each report.

The code is the journal's seal (host_tools/table/journal/seal.py), shared with the table's own
statistics report: one format, one `cylindre floor verify FILE --pub KEY.pub` for both.
"""

from host_tools.table.journal.seal import (SignatureError, canonical, describe, fingerprint,  # noqa: F401
                                           load_private, load_public, new_key, sign_file, verify_file)
