"""minigpt: the model library behind minigpt-tutor.

Data, models (MiniGPT, MLP, Bigram), training, sampling, the attention maths written out for
teaching, checkpoints and the command line. It never imports Textual: the app in ``tui`` calls it.
"""

__version__ = "0.1.0"
