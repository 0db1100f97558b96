"""What the ladder is configured with (``CHIEU_LADDER_*``): the level rules' parameters,
reputation (信誉度) and rewards. The ladder's store applies these terms and the audit holds the
ladder's books to them: one definition for both (the auditor imports it with the pure rules, not
the ladder's runtime)."""

from __future__ import annotations

from dataclasses import dataclass, field

from chieu.kit.settings import Settings, monthly_rewards
from chieu.ladder.rules import Params


@dataclass(frozen=True, slots=True)
class Terms:
    """The ladder's configuration the audit applies (the defaults are the settings' defaults)."""

    params: Params = field(default_factory=Params)
    reputation_start: int = 100
    """A player's reputation before any change, and what a paid reset restores."""
    reputation_quit: int = 10
    reputation_disconnect: int = 5
    reward_best_coins: int = 0
    """金币 per level of a new best level (0: no best-level rewards)."""
    reward_monthly: tuple[int, ...] = ()
    """金币 for the monthly ranking's places, best first (empty: no monthly rewards)."""

    @classmethod
    def from_settings(cls, s: Settings) -> Terms:
        return cls(Params(s.ladder_up, s.ladder_down, s.ladder_floor_style, s.ladder_only_lose_basis),
                   s.ladder_reputation_start, s.ladder_reputation_quit, s.ladder_reputation_disconnect,
                   s.ladder_reward_best_coins, monthly_rewards(s))

    def reputation_after(self, before: int, cause: str) -> int:
        """The reputation after one change: a quit or a disconnect lowers it (not below 0), a
        paid reset restores the start."""
        if cause == "reset":
            return self.reputation_start
        loss = self.reputation_quit if cause == "quit" else self.reputation_disconnect
        return max(0, before - loss)
