def bpe_encode(word: str, merges: list[tuple[str, str]]) -> list[str]:
    """The tokens of ``word`` under a BPE merge table.

    merges: the pairs (left, right) in the order they were learned; merging a pair makes the
    token left + right. Apply the merges by rank (earliest learned first), each to every
    occurrence, left to right without overlap, until no adjacent pair is in the table.
    Returns the tokens as strings; "".join(tokens) == word.
    """
    raise NotImplementedError("write bpe_encode")
