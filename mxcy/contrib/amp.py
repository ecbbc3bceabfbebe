"""``mx.contrib.amp``: automatic mixed precision -- not available in mxcy (float32 and
float64 kernels only); every function raises MXNetError naming AMP when called."""
from mxcy.contrib._missing import install

_NAMES = ('init', 'init_trainer', 'scale_loss', 'unscale', 'convert_model',
           'convert_symbol', 'convert_hybrid_block', 'list_lp16_ops', 'list_fp32_ops',
           'list_lp16_fp32_ops', 'list_conditional_fp32_ops', 'list_widest_type_cast',
           'list_loss_output_functions', 'list_lp16_use_fp32_params')
__all__ = list(_NAMES)
install(globals(), 'amp', _NAMES, 'automatic mixed precision (AMP)')
