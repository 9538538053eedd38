def gpt_params(vocab_size: int, block_size: int, n_layer: int, d_model: int, tied: bool = True) -> int:
    """How many parameters a GPT-2-style model has.

    Token and learned position embeddings; n_layer pre-norm blocks, each with LayerNorm →
    attention (W_Q, W_K, W_V, W_O, all d×d with biases) and LayerNorm → MLP (d → 4d → d
    with biases, GELU); a final LayerNorm; an output head d → vocab_size without a bias,
    sharing the token embedding's weights when ``tied``. LayerNorms have a scale and a shift.
    """
    raise NotImplementedError("write gpt_params")
