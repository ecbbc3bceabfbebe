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
mxcy faster), plus per-network sums; ``--before PATH`` adds mxcy from another checkout
(the code before a change) as a third variant. Every figure has its wall time and its
process CPU time (all threads; MXNet's OpenMP threads may spin, which counts against it):
on a loaded machine the CPU time is the steadier of the two. ``--networks
resnet18_v1,mobilenet1.0`` times whole hybridized networks instead of layers.
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
    return best_of(once, reps)


def best_of(once, reps):
    """(best wall seconds, best process CPU seconds) per call over `reps` rounds. The CPU
    time (all threads) stays meaningful when other jobs load the machine."""
    once()
    inner = max(1, min(50, int(0.05 / max(_seconds(once), 1e-6))))
    best, best_cpu = float('inf'), float('inf')
    for _ in range(reps):
        c, t = time.process_time(), time.perf_counter()
        for _ in range(inner):
            once()
        best = min(best, (time.perf_counter() - t) / inner)
        best_cpu = min(best_cpu, (time.process_time() - c) / inner)
    return best, best_cpu


def time_network(mx, net_name, batch, reps):
    """Hybridized inference of the zoo network (random weights) on one batch of 224²."""
    net = mx.gluon.model_zoo.vision.get_model(net_name)
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = mx.nd.array(np.random.default_rng(0).standard_normal((batch, 3, 224, 224))
                    .astype(np.float32))
    return best_of(lambda: net(x).wait_to_read(), reps)


def _seconds(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def run(lib, batches, reps, backward, only, networks):
    import importlib
    mx = importlib.import_module(lib)

    def emit(key, batch, t, nets):
        print(json.dumps({'bench': 'conv_layers', 'figure': key, 'lib': lib, 'batch': batch,
                          'value': round(t[0] * 1e3, 4), 'cpu_ms': round(t[1] * 1e3, 4),
                          'unit': 'ms', 'better': 'lower', 'backward': backward,
                          'nets': nets, 'loadavg_1m': round(os.getloadavg()[0], 2)}),
              flush=True)
    if networks:
        for net in networks:
            for batch in batches:
                emit(f'{net}_inference', batch, time_network(mx, net, batch, reps), {})
        return
    for key, (cshape, p, nets) in sorted(collect(mx).items()):
        if only and only not in key:
            continue
        for batch in batches:
            emit(key, batch, time_layer(mx, cshape, p, batch, reps, backward), nets)


def compare(args):
    """Alternate the libraries' processes; best per (figure, batch) over rounds."""
    best, info = {}, {}
    env = dict(os.environ, OMP_NUM_THREADS='2')
    base = [os.path.abspath(__file__), '--reps', str(args.reps), '--batches', args.batches]
    base += ['--backward'] if args.backward else []
    base += ['--only', args.only] if args.only else []
    base += ['--networks', args.networks] if args.networks else []
    variants = [('mxcy', sys.executable, 'mxcy', {}), ('mxnet', MXNET_PY, 'mxnet', {})]
    if args.before:
        variants.insert(1, ('before', sys.executable, 'mxcy', {'PYTHONPATH': args.before}))
    for _ in range(args.rounds):
        for name, py, lib, extra in variants:
            done = subprocess.run([py] + base + ['--lib', lib], env=dict(env, **extra),
                                  capture_output=True, text=True)
            if done.returncode:
                raise SystemExit(f"{name} ({py} --lib {lib}) failed:\n{done.stderr}")
            out = done.stdout
            for line in out.splitlines():
                d = json.loads(line)
                k = (d['figure'], d['batch'])
                info[k] = d['nets']
                cur = best.setdefault(k, {})
                cur[name] = min(cur.get(name, float('inf')), d['value'])
                cur[name + '_cpu'] = min(cur.get(name + '_cpu', float('inf')), d['cpu_ms'])
    totals = {}
    names = [v[0] for v in variants]
    for (key, batch), v in sorted(best.items()):
        emit_ratio(key, batch, v, names, info[(key, batch)], args.backward)
        for net, count in info[(key, batch)].items():
            t = totals.setdefault((net, batch), {})
            for k, ms in v.items():
                t[k] = t.get(k, 0.0) + count * ms
    for (net, batch), v in sorted(totals.items()):
        emit_ratio(f'{net}_conv_sum', batch, v, names, None, args.backward)


def emit_ratio(key, batch, v, names, nets, backward):
    line = {'bench': 'conv_layers', 'figure': key, 'batch': batch}
    for name in names:
        line[name + '_ms'] = round(v[name], 3)
        line[name + '_cpu_ms'] = round(v[name + '_cpu'], 3)
    line['mxcy_over_mxnet'] = round(v['mxcy'] / v['mxnet'], 3)
    line['mxcy_over_mxnet_cpu'] = round(v['mxcy_cpu'] / v['mxnet_cpu'], 3)
    if 'before' in v:
        line['mxcy_over_before'] = round(v['mxcy'] / v['before'], 3)
        line['mxcy_over_before_cpu'] = round(v['mxcy_cpu'] / v['before_cpu'], 3)
    if nets is not None:
        line['nets'] = nets
    line['backward'] = backward
    line['loadavg_1m'] = round(os.getloadavg()[0], 2)
    print(json.dumps(line), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--lib', default='mxcy')
    parser.add_argument('--reps', type=int, default=3)
    parser.add_argument('--batches', default='1,16')
    parser.add_argument('--backward', action='store_true')
    parser.add_argument('--only', default=None, help='layers whose key contains this')
    parser.add_argument('--compare', action='store_true')
    parser.add_argument('--rounds', type=int, default=2)
    parser.add_argument('--before', default=None,
                        help='with --compare: also run mxcy from this PYTHONPATH (a checkout '
                             'before the change) as "before"')
    parser.add_argument('--networks', default=None,
                        help='comma-separated zoo networks: time their hybridized inference '
                             'instead of the layers')
    args = parser.parse_args()
    if args.compare:
        compare(args)
    else:
        run(args.lib, [int(b) for b in args.batches.split(',')], args.reps, args.backward,
            args.only, args.networks.split(',') if args.networks else None)


if __name__ == '__main__':
    main()
