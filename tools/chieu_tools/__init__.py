"""Chiếu's developer tools, apart from the product: ``chieu up`` (the whole system on one
machine), the local cluster, the chaos run, the embedded nats-server and PostgreSQL, a local
TLS certificate authority and the local gateway. The service image does not install them."""
