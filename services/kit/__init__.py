"""The shared kit of every service: settings, logging, errors, auth, the gRPC server, the event store."""
