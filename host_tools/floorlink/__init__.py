"""What a table and the casino floor share over NATS JetStream (docs/floor.md): the stream and the
key-value bucket (stream.py), the messages and their subjects (envelope.py), and the floor's
signed commands (command.py). Plain functions, tested without a server; the contract both sides
build to."""
