"""``mx.contrib.text``: token counting (``utils``) and ``vocab.Vocabulary``. Token
embeddings (``embedding``: GloVe, FastText, custom files) are not available in mxcy."""
from mxcy.contrib.text import embedding, utils, vocab  # noqa: F401

__all__ = ['embedding', 'utils', 'vocab']
