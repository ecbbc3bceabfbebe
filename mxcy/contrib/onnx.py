"""``mx.contrib.onnx``: ONNX import/export -- not available in mxcy; every function
raises MXNetError naming ONNX when called. Models move to and from MXNet through its own
files (``Symbol.save`` / ``nd.save``), which mxcy reads and writes."""
from mxcy.contrib._missing import install

_NAMES = ('export_model', 'get_model_metadata', 'import_model', 'import_to_gluon')
__all__ = list(_NAMES)
install(globals(), 'onnx', _NAMES, 'ONNX import/export')
