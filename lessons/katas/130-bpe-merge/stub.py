def bpe_merge(ids: list[int], new_id: int) -> tuple[tuple[int, int] | None, list[int]]:
    """One step of byte-pair encoding's training.

    Find the most frequent pair of neighbouring ids (on a tie, the pair whose first
    occurrence comes earliest) and replace each of its occurrences, left to right and
    without overlap, by new_id. Returns (the pair, the new list of ids); with fewer than
    two ids there is no pair: (None, the ids unchanged). Plain Python lists of ints.
    """
    raise NotImplementedError("write bpe_merge")
