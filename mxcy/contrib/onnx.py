"""``mx.contrib.onnx``: ONNX import/export -- not available in mxcy; every function
raises MXNetError naming ONNX when called. Models move to and from MXNet through its own
files (``Symbol.save`` / ``nd.save``), which mxcy reads and writes."""
from mxcy.contrib._missing import install

__all__ = ['export_model', 'get_model_metadata', 'import_model', 'import_to_gluon']
install(globals(), 'onnx', __all__, 'ONNX import/export')
