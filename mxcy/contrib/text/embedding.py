"""``mx.contrib.text.embedding``: pretrained and file-based token embeddings -- not
available in mxcy; every name raises MXNetError naming the feature when called."""
from mxcy.contrib._missing import install

__all__ = ['GloVe', 'FastText', 'CustomEmbedding', 'CompositeEmbedding', 'create',
           'get_pretrained_file_names', 'register']
install(globals(), 'text.embedding', __all__, 'token embeddings (contrib.text.embedding)')
