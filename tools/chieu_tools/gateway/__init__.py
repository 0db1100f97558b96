"""The gateway on one machine: Envoy started locally, the front-end built and served on loopback."""
