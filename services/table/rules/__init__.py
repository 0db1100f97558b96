"""The pure rules core: one subpackage per game, one contract (``core``), one registry."""
