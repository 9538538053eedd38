import torch


def causal_padding_mask(attention_mask: torch.Tensor) -> torch.Tensor:
    """Which keys each query may attend to, in a padded batch of a decoder.

    attention_mask: (B, T), 1 (or True) for a real token and 0 (or False) for padding, as a
    tokenizer returns it for a batch of sequences of different lengths.
    Returns a bool tensor (B, 1, T, T): entry [b, 0, i, j] is True when query i of sequence b
    may attend to key j, that is when j ≤ i and token j of sequence b is real. (True means
    "may attend", as in the boolean attn_mask of scaled_dot_product_attention; the head axis
    of size 1 broadcasts over heads.)
    """
    raise NotImplementedError("write causal_padding_mask")
