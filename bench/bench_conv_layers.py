#!/usr/bin/env python3
"""Per-layer convolution speed on the layer shapes of real networks (issue 16).

    python bench/bench_conv_layers.py                    # mxcy, one JSON line per layer
    OMP_NUM_THREADS=2 /work/mxnet_venv/bin/python bench/bench_conv_layers.py --lib mxnet
    python bench/bench_conv_layers.py --compare          # both, alternating rounds, ratios

The layers are those of the Gluon model zoo's resnet18_v1, mobilenet1.0 and mobilenetv2_1.0
at 224² (read from the networks built by the library under test, deduplicated by
geometry), timed as single ``nd.Convolution`` calls (forward, float32, ms per call, best
of rounds) at batch 1 and 16. ``--backward`` times forward + backward through autograd
instead. ``--compare`` runs this script in both venvs in alternating rounds (so both see
the same machine load) and prints, per layer, both figures and mxcy/mxnet (below 1 is
mxcy faster), plus per-network sums.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

NETS = ('resnet18_v1', 'mobilenet1.0', 'mobilenetv2_1.0')
MXNET_PY = '/work/mxnet_venv/bin/python'


def layer_shapes(mx, net_name):
    """[(key, data_shape, params)] of every Convolution in the network at batch 1, 224²."""
    net = mx.gluon.model_zoo.vision.get_model(net_name)
    sym = net(mx.sym.var('data'))
    internals = sym.get_internals()
    _, out_shapes, _ = internals.infer_shape(data=(1, 3, 224, 224))
    shape_of = dict(zip(internals.list_outputs(), out_shapes))
    nodes = json.loads(sym.tojson())['nodes']
    layers = []
    for node in nodes:
        if node['op'] != 'Convolution':
            continue
        src = nodes[node['inputs'][0][0]]
        in_name = src['name'] if src['op'] == 'null' else src['name'] + '_output'
        attrs = node.get('attrs', node.get('param', {}))
        params = {k: attrs[k] for k in ('kernel', 'stride', 'pad', 'num_filter', 'num_group',
                                        'no_bias') if k in attrs}
        layers.append((shape_of[in_name][1:], params))
    return layers


def layer_key(cshape, p):
    k = p['kernel'].strip('()').replace(', ', 'x').replace(',', 'x')
    s = p.get('stride', '(1, 1)').strip('()').split(',')[0]
    g = p.get('num_group', '1')
    return f"c{cshape[0]}_{cshape[1]}x{cshape[2]}_k{k}_s{s}_f{p['num_filter']}_g{g}"


def collect(mx):
    """{key: (cshape, params, {net: count})} over the networks."""
    seen = {}
    for net in NETS:
        for cshape, p in layer_shapes(mx, net):
            key = layer_key(cshape, p)
            entry = seen.setdefault(key, (cshape, p, {}))
            entry[2][net] = entry[2].get(net, 0) + 1
    return seen


def time_layer(mx, cshape, p, batch, reps, backward):
    rng = np.random.default_rng(0)
    x = mx.nd.array(rng.standard_normal((batch,) + tuple(cshape)).astype(np.float32))
    kernel = tuple(int(v) for v in p['kernel'].strip('()').split(','))
    stride = tuple(int(v) for v in p.get('stride', '(1, 1)').strip('()').split(','))
    pad = tuple(int(v) for v in p.get('pad', '(0, 0)').strip('()').split(','))
    f, g = int(p['num_filter']), int(p.get('num_group', '1'))
    w = mx.nd.array(rng.standard_normal((f, cshape[0] // g) + kernel).astype(np.float32) * .1)
    b = mx.nd.array(rng.standard_normal(f).astype(np.float32))
    kw = dict(kernel=kernel, stride=stride, pad=pad, num_filter=f, num_group=g)

    def once():
        if backward:
            for a in (x, w, b):
                a.attach_grad()
            with mx.autograd.record():
                y = mx.nd.Convolution(x, w, b, **kw)
            y.backward()
            x.grad.wait_to_read()
            w.grad.wait_to_read()
        else:
            mx.nd.Convolution(x, w, b, **kw).wait_to_read()
    once()
    inner = max(1, min(50, int(0.05 / max(_seconds(once), 1e-6))))
    best = float('inf')
    for _ in range(reps):
        t = time.perf_counter()
        for _ in range(inner):
            once()
        best = min(best, (time.perf_counter() - t) / inner)
    return best


def _seconds(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def run(lib, batches, reps, backward, only):
    import importlib
    mx = importlib.import_module(lib)
    for key, (cshape, p, nets) in sorted(collect(mx).items()):
        if only and only not in key:
            continue
        for batch in batches:
            t = time_layer(mx, cshape, p, batch, reps, backward)
            print(json.dumps({'bench': 'conv_layers', 'figure': key, 'lib': lib,
                              'batch': batch, 'value': round(t * 1e3, 4), 'unit': 'ms',
                              'better': 'lower', 'backward': backward, 'nets': nets,
                              'loadavg_1m': round(os.getloadavg()[0], 2)}), flush=True)


def compare(args):
    """Alternate mxcy and mxnet processes; best per (layer, batch) over rounds."""
    best = {}
    info = {}
    env = dict(os.environ, OMP_NUM_THREADS='2')
    base = [os.path.abspath(__file__), '--reps', str(args.reps), '--batches', args.batches]
    if args.backward:
        base.append('--backward')
    if args.only:
        base += ['--only', args.only]
    for _ in range(args.rounds):
        for lib, py in (('mxcy', sys.executable), ('mxnet', MXNET_PY)):
            out = subprocess.run([py] + base + ['--lib', lib], env=env, check=True,
                                 capture_output=True, text=True).stdout
            for line in out.splitlines():
                d = json.loads(line)
                k = (d['figure'], d['batch'])
                info[k] = d['nets']
                cur = best.setdefault(k, {})
                cur[lib] = min(cur.get(lib, float('inf')), d['value'])
    totals = {}
    for (key, batch), v in sorted(best.items()):
        ratio = v['mxcy'] / v['mxnet']
        print(json.dumps({'bench': 'conv_layers', 'figure': key, 'batch': batch,
                          'mxcy_ms': v['mxcy'], 'mxnet_ms': v['mxnet'],
                          'mxcy_over_mxnet': round(ratio, 3), 'nets': info[(key, batch)],
                          'backward': args.backward}), flush=True)
        for net, count in info[(key, batch)].items():
            t = totals.setdefault((net, batch), [0.0, 0.0])
            t[0] += count * v['mxcy']
            t[1] += count * v['mxnet']
    for (net, batch), (a, b) in sorted(totals.items()):
        print(json.dumps({'bench': 'conv_layers', 'figure': f'{net}_conv_sum', 'batch': batch,
                          'mxcy_ms': round(a, 3), 'mxnet_ms': round(b, 3),
                          'mxcy_over_mxnet': round(a / b, 3), 'backward': args.backward}),
              flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--lib', default='mxcy')
    parser.add_argument('--reps', type=int, default=3)
    parser.add_argument('--batches', default='1,16')
    parser.add_argument('--backward', action='store_true')
    parser.add_argument('--only', default=None, help='layers whose key contains this')
    parser.add_argument('--compare', action='store_true')
    parser.add_argument('--rounds', type=int, default=2)
    args = parser.parse_args()
    if args.compare:
        compare(args)
    else:
        run(args.lib, [int(b) for b in args.batches.split(',')], args.reps, args.backward,
            args.only)


if __name__ == '__main__':
    main()
