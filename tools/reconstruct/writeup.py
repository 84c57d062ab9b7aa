"""What the write-up fixes of a setting a generator otherwise chooses: its own numbers (the
H100 sweep's 512-token answers, GB10 test A's 20 requests) are kept apart from the choice, so a
move of the choice never moves them (make marks), and a choice that sets one is refused."""

from __future__ import annotations


def with_write_up(choice: str, fixed: dict, chosen: dict, error: type[Exception] = ValueError) -> dict:
    """`fixed` (the write-up's) and `chosen` (the generator's choice `choice`) as one mapping;
    `error` when the choice holds a key the write-up fixes."""
    theirs = sorted(set(fixed) & set(chosen))
    if theirs:
        raise error(f"{', '.join(f'{choice}.{k}' for k in theirs)}: the write-up's, not a choice")
    return {**fixed, **chosen}
