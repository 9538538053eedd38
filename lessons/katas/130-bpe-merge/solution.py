def bpe_merge(ids: list[int], new_id: int) -> tuple[tuple[int, int] | None, list[int]]:
    """Merge the most frequent neighbouring pair of ids into new_id."""
    if len(ids) < 2:
        return None, list(ids)
    counts: dict[tuple[int, int], int] = {}  # dicts keep insertion order: first seen first
    for pair in zip(ids, ids[1:]):
        counts[pair] = counts.get(pair, 0) + 1
    best = max(counts, key=counts.get)  # max keeps the earliest of equal counts
    merged, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == best:
            merged.append(new_id)
            i += 2
        else:
            merged.append(ids[i])
            i += 1
    return best, merged
