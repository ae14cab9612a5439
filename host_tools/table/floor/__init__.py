"""The floor's side of the table: the outbox to NATS JetStream and the floor's signed commands."""
