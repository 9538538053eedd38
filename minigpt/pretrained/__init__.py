"""Checkpoints trained elsewhere, read into the tutor's own models: GPT-2-family folders in the
Hugging Face layout (gpt2.py) and their byte-level BPE tokenizer (byte_bpe.py)."""
