"""``mx.contrib.symbol``: the contrib operators mxcy has, as ``mx.sym.<name>`` functions
without MXNet's ``_contrib_`` prefix (e.g. ``ctc_loss``, ``CTCLoss``)."""
from mxcy import symbol as _sym

__all__ = sorted(name[len('_contrib_'):] for name in dir(_sym)
                 if name.startswith('_contrib_'))
globals().update({name: getattr(_sym, '_contrib_' + name) for name in __all__})
