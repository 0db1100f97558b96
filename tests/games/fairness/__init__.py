"""docs/fairness.md implemented from the page alone: chieu-fair-v1 (:mod:`.page`) and each
random game's deal in a module named by its key, with ``check(name, vector, spec)``."""
