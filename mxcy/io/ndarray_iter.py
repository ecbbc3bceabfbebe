"""``mx.io.NDArrayIter``: batches over in-memory arrays (MXNet 1.x names and defaults).

Contract, for ``n`` samples and batch size ``b`` (every batch has exactly ``b`` rows):

* ``last_batch_handle='pad'``: ceil(n/b) batches; the last one is completed with samples
  from the start of the same epoch's order (cycling when n < b/2, where MXNet crashed,
  mx#15535) and reports ``pad`` = the number of filler rows.
* ``'discard'``: floor(n/b) batches; the incomplete tail is dropped.
* ``'roll_over'``: an epoch is the stream ``carry + this epoch's order``; it yields every
  full batch of that stream and keeps the incomplete tail as the next epoch's carry
  (when the epoch ran to its end). No sample is lost: after k epochs each was seen k
  times except the fewer than b still in the carry; with n < b the carry grows until
  a batch fills. Rolled-over batches hold only
  real samples, so their ``pad`` is 0 (MXNet reported a nonzero pad there).
* n = 0 gives no batch in any mode.
* ``shuffle=True`` draws a new permutation at every ``reset()`` (and at construction)
  from NumPy's global generator, as MXNet does: ``np.random.seed(s)`` makes the epochs
  reproducible (mx#12285: MXNet shuffled only once for a while).
* ``reset_for_predict()`` (mx#5690: roll_over leaked into predict) drops the carry and
  runs one pass in which every sample appears exactly once, the last batch padded as
  in 'pad' mode whatever `last_batch_handle` is. ``hard_reset()`` drops the carry only.
* ``batch.index`` (and ``getindex()``) holds the sample ids of the batch's rows.

Batches are cheap: rows that are consecutive samples (no shuffle, no carry, no pad) are
views ``arr[i:j]`` of the source arrays; otherwise one asynchronous gather op per array.
NumPy inputs are copied once into NDArrays (float32 unless they are NDArrays already, as
``mx.nd.array`` does); a batch shares memory with them, so do not write into a batch.
"""
import numpy as np

from mxcy._ndarray import NDArray, new_empty, push_numpy
from mxcy._ops import push_rows
from mxcy.base import dtype_code
from mxcy.io.base import DataBatch, DataDesc, DataIter, check_batch_size, register
from mxcy.ndarray.utils import array

__all__ = ['NDArrayIter']

LAST_BATCH_HANDLES = ('pad', 'discard', 'roll_over')
_NO_INDICES = np.zeros(0, dtype=np.int64)


def init_data(data, allow_empty, default_name, what, where):
    """``[(name, NDArray), ...]`` from an array, a list/tuple of arrays or a dict."""
    if data is None:
        if allow_empty:
            return []
        raise ValueError(f"{where}: {what} must not be None")
    if isinstance(data, (NDArray, np.ndarray)):
        data = [data]
    if isinstance(data, (list, tuple)):
        if not data and not allow_empty:
            raise ValueError(f"{where}: {what} must contain at least one array")
        if len(data) == 1:
            items = [(default_name, data[0])]
        else:
            items = [(f'_{i}_{default_name}', d) for i, d in enumerate(data)]
    elif isinstance(data, dict):
        for key in data:
            if not isinstance(key, str):
                raise TypeError(f"{where}: {what} dict keys must be str, got {key!r}")
        items = sorted(data.items())    # MXNet orders named inputs by name
    else:
        raise TypeError(f"{where}: {what} must be an NDArray, a NumPy array, a list of them "
                        f"or a dict str -> array, got {type(data).__name__}")
    out = []
    for name, value in items:
        if not isinstance(value, NDArray):
            try:
                value = array(value)
            except TypeError as err:
                raise TypeError(f"{where}: {what} {name!r}: {err}") from None
        if not value.shape:
            raise ValueError(f"{where}: {what} {name!r} must have at least one dimension "
                             f"(the samples), got shape ()")
        out.append((name, value))
    return out


def count_samples(sources, axis, where):
    """The common size of the batch axis of every ``(name, array)`` source."""
    sizes = {}
    for name, arr in sources:
        if axis >= len(arr.shape):
            raise ValueError(f"{where}: {name!r} has shape {arr.shape}, which has no batch "
                             f"axis {axis}")
        sizes[name] = arr.shape[axis]
    if len(set(sizes.values())) > 1:
        raise ValueError(f"{where}: every data and label array must hold the same number of "
                         f"samples along axis {axis}, got {sizes}")
    return next(iter(sizes.values())) if sizes else 0


def gather(arr, idx, axis, name='NDArrayIter', zero_tail=0):
    """``arr`` restricted to samples `idx` along `axis`: a view when they are consecutive.

    The last `zero_tail` rows are zeros instead of samples (padding that is not data).
    """
    k = len(idx)
    consecutive = k and idx[-1] - idx[0] == k - 1 and (k == 1 or (np.diff(idx) == 1).all())
    if consecutive and axis == 0 and not zero_tail:
        start = int(idx[0])
        return arr[start:start + k]
    shape = arr.shape[:axis] + (k,) + arr.shape[axis + 1:]
    out = new_empty(shape, dtype_code(arr.dtype), arr.context)
    if axis == 0 and not zero_tail and k and arr.size:
        # a C row gather: no Python op (and no GIL hand-off) per shuffled batch
        rows = arr.reshape((arr.shape[0], -1))
        push_rows('gather', array(np.asarray(idx, np.int64), arr.context, dtype=np.int64),
                  rows, out.reshape((k, rows.shape[1])))
        return out

    def run(x, o):
        np.take(x, idx, axis=axis, out=o, mode='clip')    # ids are valid: no checking copy
        if zero_tail:
            o[(slice(None),) * axis + (slice(k - zero_tail, None),)] = 0
    push_numpy(run, [arr], [out], name + '.gather')
    return out


@register
class NDArrayIter(DataIter):
    """Iterate over NDArrays / NumPy arrays in batches (see the module docstring)."""

    _pad_with_zeros = False     # CSVIter(round_batch=False) pads with zeros, not samples

    def __init__(self, data, label=None, batch_size=1, shuffle=False,
                 last_batch_handle='pad', data_name='data', label_name='softmax_label',
                 layout='NCHW'):
        where = type(self).__name__
        super().__init__(check_batch_size(batch_size, where))
        if last_batch_handle not in LAST_BATCH_HANDLES:
            raise ValueError(f"{where}: last_batch_handle must be one of "
                             f"{LAST_BATCH_HANDLES}, got {last_batch_handle!r}")
        if not isinstance(layout, str) or 'N' not in layout:
            raise ValueError(f"{where}: layout must be a string with an 'N' (batch) axis, "
                             f"got {layout!r}")
        self._where = where
        self.layout = layout
        self._axis = layout.find('N')
        self.data = init_data(data, False, data_name, 'data', where)
        self.label = init_data(label, True, label_name, 'label', where)
        self.num_data = count_samples(self.data + self.label, self._axis, where)
        self.shuffle = bool(shuffle)
        self.last_batch_handle = last_batch_handle
        self._carry = _NO_INDICES
        self._start_pass(_NO_INDICES, complete=last_batch_handle == 'pad')

    # -- shapes -------------------------------------------------------------------------
    def _descs(self, sources):
        ax = self._axis
        return [DataDesc(name, arr.shape[:ax] + (self.batch_size,) + arr.shape[ax + 1:],
                         arr.dtype, self.layout) for name, arr in sources]

    @property
    def provide_data(self):
        """DataDescs of the data arrays, with the batch size on the batch axis."""
        return self._descs(self.data)

    @property
    def provide_label(self):
        """DataDescs of the label arrays, with the batch size on the batch axis."""
        return self._descs(self.label)

    # -- epochs -------------------------------------------------------------------------
    def _permutation(self, n):
        """A new epoch order (NumPy's global generator, as MXNet's NDArrayIter)."""
        return np.random.permutation(n).astype(np.int64)

    def _start_pass(self, carry, complete):
        """Plan one pass over ``carry + order``; `complete` pads the tail instead."""
        order = self._permutation(self.num_data) if self.shuffle else \
            np.arange(self.num_data, dtype=np.int64)
        self.idx = order
        stream = np.concatenate([carry, order]) if len(carry) else order
        b = self.batch_size
        if complete:
            self._num_batches = -(-len(stream) // b)
            self._leftover = _NO_INDICES
        else:
            self._num_batches = len(stream) // b
            self._leftover = stream[self._num_batches * b:] \
                if self.last_batch_handle == 'roll_over' else _NO_INDICES
        self._carry = carry
        self._stream = stream
        self._complete = complete
        self._pos = -1
        self._exhausted = False
        self._predict_pass = False
        self._batch = None

    def reset(self):
        """Start the next epoch: a new shuffle; under roll_over, prepend the carry."""
        carry = _NO_INDICES
        if self.last_batch_handle == 'roll_over' and not self._predict_pass:
            if self._exhausted:
                carry = self._leftover
            elif self._pos < 0:
                carry = self._carry          # the carry was not consumed yet: keep it
        self._start_pass(carry, complete=self.last_batch_handle == 'pad')

    def hard_reset(self):
        """Start a new epoch without the rolled-over samples."""
        self._start_pass(_NO_INDICES, complete=self.last_batch_handle == 'pad')

    def reset_for_predict(self):
        """One pass over every sample exactly once, the last batch padded (pad reported)."""
        self._start_pass(_NO_INDICES, complete=True)
        self._predict_pass = True

    # -- batches ------------------------------------------------------------------------
    def iter_next(self):
        if self._pos + 1 >= self._num_batches:
            self._pos = self._num_batches
            self._exhausted = True
            self._batch = None
            return False
        self._pos += 1
        b = self.batch_size
        real = self._stream[self._pos * b:(self._pos + 1) * b]
        pad = b - len(real)
        indices = real
        if pad:
            fill = self.idx[np.arange(pad) % self.num_data]
            indices = np.concatenate([real, fill])
        self._batch = {'indices': indices, 'pad': pad}
        return True

    def _current(self, what):
        if self._batch is None:
            raise RuntimeError(f"{self._where}.{what}: there is no current batch; call "
                               "iter_next() (after reset() at the end of an epoch)")
        return self._batch

    def _gathered(self, key, sources, what):
        batch = self._current(what)
        if key not in batch:
            zero_tail = batch['pad'] if self._pad_with_zeros else 0
            batch[key] = [gather(arr, batch['indices'], self._axis, self._where, zero_tail)
                          for _, arr in sources]
        return batch[key]

    def getdata(self):
        return self._gathered('data', self.data, 'getdata')

    def getlabel(self):
        return self._gathered('label', self.label, 'getlabel')

    def getpad(self):
        return self._current('getpad')['pad']

    def getindex(self):
        return self._current('getindex')['indices'].copy()

    def next(self):
        if not self.iter_next():
            raise StopIteration
        return DataBatch(data=self.getdata(), label=self.getlabel(), pad=self.getpad(),
                         index=self.getindex(), provide_data=self.provide_data,
                         provide_label=self.provide_label)

    @property
    def num_batches(self):
        """The number of batches of the current pass (an mxcy addition)."""
        return self._num_batches
