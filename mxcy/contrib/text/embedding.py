"""``mx.contrib.text.embedding``: pretrained and file-based token embeddings -- not
available in mxcy; every name raises MXNetError naming the feature when called."""
from mxcy.contrib._missing import install

_NAMES = ('GloVe', 'FastText', 'CustomEmbedding', 'CompositeEmbedding', 'create',
           'get_pretrained_file_names', 'register')
__all__ = list(_NAMES)
install(globals(), 'text.embedding', _NAMES, 'token embeddings (contrib.text.embedding)')
