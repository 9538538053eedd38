def gpt_params(vocab_size: int, block_size: int, n_layer: int, d_model: int, tied: bool = True) -> int:
    """Parameters of a GPT-2-style model, counted by part."""
    d = d_model
    embeddings = vocab_size * d + block_size * d
    attention = 4 * (d * d + d)
    mlp = (d * 4 * d + 4 * d) + (4 * d * d + d)
    norms = 2 * (2 * d)
    final_norm = 2 * d
    head = 0 if tied else d * vocab_size
    return embeddings + n_layer * (attention + mlp + norms) + final_norm + head
