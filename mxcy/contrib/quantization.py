"""``mx.contrib.quantization`` (also ``mx.contrib.quant``): INT8 quantization -- not
available in mxcy (no quantized operators); every function raises MXNetError naming
quantization when called."""
from mxcy.contrib._missing import install

_NAMES = ('quantize_model', 'quantize_model_mkldnn', 'quantize_graph', 'quantize_net',
           'quantize_net_v2', 'calib_graph', 'combine_histogram')
__all__ = list(_NAMES)
install(globals(), 'quantization', _NAMES, 'INT8 quantization')
