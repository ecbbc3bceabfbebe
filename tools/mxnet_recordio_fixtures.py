#!/usr/bin/env python3
"""Write the RecordIO files that mxcy's tests read, with MXNet 1.9.1 itself.

Run in the MXNet peer venv (never in CI):

    /work/mxnet_venv/bin/python tools/mxnet_recordio_fixtures.py

tests/mxnet_files/recordio/ gets:
- data.rec + data.idx: an MXIndexedRecordIO (keys 1, 4, 7, ...) whose records have sizes
  0, 1, 2, 3, 4, 5, 7, 8, 13 and 1000 bytes, records holding the RecordIO magic number at
  4-aligned offsets (MXNet stores those in several parts), and records made by
  ``recordio.pack`` with a scalar label and with multi-label headers;
- expected.json: for every key, the record's bytes (hex) and, for packed records, the
  header MXNet's ``unpack`` gives and the payload.
The output is deterministic: a rerun reproduces the committed bytes.
"""
import json
import os
import struct

import mxnet as mx
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'mxnet_files',
                   'recordio')
MAGIC = struct.pack('<I', 0xced7230a)


def records():
    rng = np.random.RandomState(0)
    raw = [bytes(rng.randint(0, 256, n, dtype=np.uint8)) for n in
           (0, 1, 2, 3, 4, 5, 7, 8, 13, 1000)]
    raw += [MAGIC, b'ab' + MAGIC + b'cd', b'abcd' + MAGIC + b'12345678' + MAGIC + b'xyz',
            MAGIC + MAGIC + b'e', b'xyz' + MAGIC]
    packed = [(mx.recordio.IRHeader(0, 3.5, 11, 12), b'payload'),
              (mx.recordio.IRHeader(0, [1.0, 2.5, -3.0], 21, 22), b'multi'),
              (mx.recordio.IRHeader(0, np.arange(5, dtype=np.float32), 2 ** 40, 7), b''),
              (mx.recordio.IRHeader(0, [0.25], 0, 0), b'one label, 13')]
    return raw, packed


def main():
    os.makedirs(OUT, exist_ok=True)
    raw, packed = records()
    rec = mx.recordio.MXIndexedRecordIO(os.path.join(OUT, 'data.idx'),
                                        os.path.join(OUT, 'data.rec'), 'w')
    expected = []
    key = 1
    for buf in raw:
        rec.write_idx(key, buf)
        expected.append({'key': key, 'hex': buf.hex()})
        key += 3
    for header, payload in packed:
        buf = mx.recordio.pack(header, payload)
        rec.write_idx(key, buf)
        h, s = mx.recordio.unpack(buf)
        label = h.label.tolist() if isinstance(h.label, np.ndarray) else h.label
        expected.append({'key': key, 'hex': buf.hex(), 'header': [h.flag, label, h.id, h.id2],
                         'payload_hex': s.hex()})
        key += 3
    rec.close()
    with open(os.path.join(OUT, 'expected.json'), 'w') as f:
        json.dump(expected, f, indent=1)
    print('wrote', sorted(os.listdir(OUT)))


if __name__ == '__main__':
    main()
