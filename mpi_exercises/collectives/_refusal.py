"""What the front doors do after an argument agreement that failed: gather every rank's message
and give up the calls that ranks started while the agreement was in flight, so that no message of
theirs is left for a later call (:class:`~mpi_exercises.collectives._door.FrontDoor` calls these;
``state`` is its per-communicator state)."""

from __future__ import annotations


def gathered(state, mine) -> list:
    """After an agreement that failed: every rank's ``mine`` (an allgather), and the calls
    that ranks started before the agreement answered (:meth:`FrontDoor.enter`'s ``prime``)
    given up on every rank that holds their executor, so that no message of theirs is left
    for a later call to receive."""
    ex = state.primed
    started = None
    if ex is not None and ex.started and ex.sent_step is not None:   # it sent its first messages
        started = (next((w for w, (_, e) in state.cache.items() if e is ex), None), ex.sent_step)
    state.primed = None
    everyone = state.dup.allgather((mine, started))
    by_word = {}
    for rank, (_, s) in enumerate(everyone):
        if s is not None:
            by_word.setdefault(s[0], []).append((rank, s[1]))
    for word, ranks in sorted(by_word.items()):
        hit = state.cache.get(word)
        if hit is not None:
            hit[1].abandon(ranks)
    if ex is not None and ex.started:           # started with no message of its own: nothing sent
        ex.abandon([])
    return [m for m, _ in everyone]


def marked(state, everyone: list) -> list:
    """After an agreement that failed, ``everyone``'s ``(message, check)``: if any rank made its
    first unchecked call in it, every rank counts it made (the state stays the same on every
    rank, whatever the flags were)."""
    if not all(check for _, check in everyone):
        state.unchecked = True
    return everyone
