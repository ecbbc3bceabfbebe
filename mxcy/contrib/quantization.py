"""``mx.contrib.quantization`` (also ``mx.contrib.quant``): INT8 quantization -- not
available in mxcy (no quantized operators); every function raises MXNetError naming
quantization when called."""
from mxcy.contrib._missing import install

__all__ = ['quantize_model', 'quantize_model_mkldnn', 'quantize_graph', 'quantize_net',
           'quantize_net_v2', 'calib_graph', 'combine_histogram']
install(globals(), 'quantization', __all__, 'INT8 quantization')
