"""``mx.init`` / ``mx.initializer``: weight initializers (MXNet 1.x names and semantics).

Contract:

* ``init(desc, arr)`` fills the NDArray `arr` in place. `desc` is an ``InitDesc`` (a str
  with ``attrs`` and ``global_init``). An ``__init__`` attribute (``desc.attrs['__init__']``,
  a JSON ``[name, kwargs]`` as ``dumps`` writes, set by ``mx.sym.Variable(init=...)``)
  overrides everything and its ``_init_weight`` fills the array. Otherwise the name's
  suffix picks the rule: ``weight`` -> ``_init_weight`` (the initializer's own rule),
  ``bias``/``beta`` -> 0, ``gamma`` -> 1, ``moving_mean``/``moving_inv_var``/
  ``moving_avg`` -> 0, ``moving_var`` -> 1, ``min`` -> 0, ``max`` -> 1 (quantization
  ranges), ``weight_quantize`` -> random int8, ``bias_quantize`` -> 0. Any other name
  raises ValueError naming the array. A plain str (not an ``InitDesc``) takes MXNet's
  deprecated legacy path (``upsampling*`` -> bilinear, ``stn_loc*``), with a warning.
* Every write is pushed to the engine (``arr[:] = ...`` or a sampling op writing `arr`),
  so initializing returns at once and never waits. Random initializers draw from the
  engine-ordered generator of ``mx.random``, so ``mx.random.seed(s)`` makes them
  reproducible on any engine type and worker count.
* ``register`` / ``alias`` / ``create`` come from ``mxcy.registry``: ``create('xavier',
  magnitude=2)``, ``create(init.dumps())`` and ``create(instance)`` all work.
"""
from mxcy.initializer.base import (InitDesc, Initializer, Load, Mixed, alias, create,
                                   register)
from mxcy.initializer.basic import (Constant, MSRAPrelu, Normal, One, Orthogonal, Uniform,
                                    Xavier, Zero)
from mxcy.initializer.structured import Bilinear, FusedRNN, LSTMBias

__all__ = ['InitDesc', 'Initializer', 'register', 'alias', 'create', 'Load', 'Mixed',
           'Zero', 'One', 'Constant', 'Uniform', 'Normal', 'Orthogonal', 'Xavier',
           'MSRAPrelu', 'Bilinear', 'LSTMBias', 'FusedRNN']
