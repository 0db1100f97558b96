"""The games: one package per game (``chieu.games.<key>``: its rules, its descriptor and its
generated contract ``v1``), and beside them the shared pure core: the decider contract
(``core``), the option readers (``common``), provably fair randomness (``fair``), the plain
encoding of states (``plain``), the descriptor type and the registry that finds the games.

Pure: no I/O, no clock, no global randomness. Every service, the auditor and the tools import it.
"""
