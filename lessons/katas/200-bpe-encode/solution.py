def bpe_encode(word: str, merges: list[tuple[str, str]]) -> list[str]:
    """The tokens of ``word``: merge the lowest-ranked adjacent pair, everywhere, until none is left."""
    rank: dict[tuple[str, str], int] = {}
    for i, (left, right) in enumerate(merges):
        rank.setdefault((left, right), i)
    tokens = list(word)
    while len(tokens) > 1:
        best = min(zip(tokens, tokens[1:]), key=lambda pair: rank.get(pair, len(rank)))
        if best not in rank:
            break
        merged, i = [], 0
        while i < len(tokens):
            if i + 1 < len(tokens) and (tokens[i], tokens[i + 1]) == best:
                merged.append(tokens[i] + tokens[i + 1])
                i += 2
            else:
                merged.append(tokens[i])
                i += 1
        tokens = merged
    return tokens
