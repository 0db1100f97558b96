"""The 过关斩将 ladder (levels, level points). So far its pure rules only; see rules.py."""
