"""The models: MiniGPT, the MLP and the bigram baseline, their configs (``config``), and
``build`` to make one by kind."""
