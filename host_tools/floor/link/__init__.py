"""What a table and the casino floor share over NATS JetStream (docs/floor/design.md): the stream and the
key-value bucket (stream.py), the messages and their subjects (envelope.py), the floor's signed
commands (command.py), and the broker's per-table users (creds.py, `cylindre floor-creds`).
Plain functions, tested without a server; the contract both sides build to."""
