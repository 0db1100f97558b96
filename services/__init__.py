"""Chiếu: an event-sourced backend for portals of traditional Vietnamese and Chinese games."""
