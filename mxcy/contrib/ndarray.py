"""``mx.contrib.ndarray``: the contrib operators mxcy has, as ``mx.nd.<name>`` functions
without MXNet's ``_contrib_`` prefix (e.g. ``ctc_loss``, ``CTCLoss``)."""
from mxcy import ndarray as _nd

__all__ = sorted(name[len('_contrib_'):] for name in dir(_nd)
                 if name.startswith('_contrib_'))
globals().update({name: getattr(_nd, '_contrib_' + name) for name in __all__})
