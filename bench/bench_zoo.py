#!/usr/bin/env python3
"""Model-zoo speed (issue 16): MXNet-exported Gluon networks loaded the way users load them.

    /work/mxnet_venv/bin/python tools/mxnet_zoo_export.py       # once: the cache
    python bench/bench_zoo.py                                     # mxcy
    OMP_NUM_THREADS=2 /work/mxnet_venv/bin/python bench/bench_zoo.py --lib mxnet
    python bench/bench_zoo.py --compare                           # all libraries, alternated

Each network comes from ``<cache>/<name>-symbol.json`` + ``<name>-0000.params`` (the cache
is ``--cache``, else ``$MXCY_ZOO_CACHE``, else ``~/.cache/mxcy-zoo``; a missing file is an
error that says how to make it: nothing is downloaded). It is loaded with
``mx.model.load_checkpoint`` into an ``mx.mod.Module`` bound with ``for_training=False``,
and each figure is images/s of ``forward(is_train=False)`` + a wait on the output, batch 1
and 16, best of ``--rounds`` rounds after a warm-up round. ``train`` is ResNet-18 (the zoo
graph with a SoftmaxOutput head) on 32×32 inputs, batch 64, SGD with momentum 0.9 through
Module (``forward_backward`` + ``update``).

``--passes SPEC`` (mxcy) binds with ``MXCY_GRAPH_PASSES=SPEC`` (see mxcy/_graph_passes.py):
``0`` runs the bound graph as it is. ``--ab SPEC ...`` (mxcy) binds the network once per
spec and ``0`` in one process and interleaves their rounds: the effect of each pass.

``--compare`` runs this script per network and library in turn (mxcy, MXNet 1.9.1 with
OMP_NUM_THREADS=2, the PyTorch peer bench/peer_torch_zoo.py where it writes the network;
mxcy again with each ``--pass-variants`` spec for ``--passes-nets``), ``--alternations``
times (every other time in reverse order), and prints every JSON line, then a table of
the best figure per library with the ratios and the geometric means. One JSON line per
figure; ``steal_pct`` is the hypervisor's share of CPU time during the figure.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time

import numpy as np

NETWORKS = {'resnet18_v1': 224, 'resnet50_v1': 224, 'resnet50_v2': 224, 'mobilenet1.0': 224,
            'mobilenetv2_1.0': 224, 'squeezenet1.1': 224, 'densenet121': 224,
            'inceptionv3': 299, 'vgg11_bn': 224, 'alexnet': 224}
BENCH = 'zoo'
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def default_cache():
    return os.environ.get('MXCY_ZOO_CACHE') or os.path.join(
        os.path.expanduser('~'), '.cache', 'mxcy-zoo')


def checkpoint(mx, cache, name):
    prefix = os.path.join(cache, name)
    for path in (prefix + '-symbol.json', prefix + '-0000.params'):
        if not os.path.exists(path):
            raise SystemExit(
                f"bench_zoo: {path} is missing; make the cache with MXNet 1.9.1 (nothing is "
                f"downloaded): /work/mxnet_venv/bin/python tools/mxnet_zoo_export.py "
                f"--cache {cache}")
    return mx.model.load_checkpoint(prefix, 0)


def timed_rounds(step, iters, rounds):
    """Best seconds per iteration of `step` over `rounds` rounds (after one warm-up)."""
    step()
    best = math.inf
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(iters):
            step()
        best = min(best, (time.perf_counter() - t) / iters)
    return best


def inference_step(mx, cache, name, batch):
    """A Module bound for inference on the cached checkpoint and its timed step."""
    side = NETWORKS[name]
    sym, arg, aux = checkpoint(mx, cache, name)
    mod = mx.mod.Module(sym, data_names=['data'], label_names=None, context=mx.cpu())
    mod.bind(data_shapes=[('data', (batch, 3, side, side))], for_training=False)
    mod.set_params(arg, aux)
    rng = np.random.RandomState(0)
    x = mx.nd.array(rng.uniform(-1, 1, (batch, 3, side, side)).astype(np.float32))
    data = mx.io.DataBatch([x])

    def step():
        mod.forward(data, is_train=False)
        mod.get_outputs()[0].wait_to_read()
    return mod, step


def infer(mx, lib, cache, name, batch, rounds, passes, emit):
    mod, step = inference_step(mx, cache, name, batch)
    iters = 4 if batch == 1 else 1
    sec = timed_rounds(step, iters, rounds)
    out = mod.get_outputs()[0].asnumpy()
    if not np.all(np.isfinite(out)):
        raise SystemExit(f"bench_zoo: {name} gave non-finite outputs")
    emit(BENCH, f'{name}_b{batch}', lib, round(batch / sec, 2), 'images/s', better='higher',
         network=name, batch=batch, passes=passes, checksum=round(float(out.sum()), 3))


def passes_ab(mx, cache, name, batch, rounds, specs, emit):
    """mxcy with each MXCY_GRAPH_PASSES spec in one process, their rounds interleaved (the
    first variant of a round rotating), so all see the same machine load: the best
    images/s of each and the median over rounds of its time ÷ the time of spec '0'."""
    from _common import interleaved_times
    steps, outs = {}, {}
    for spec in specs:
        os.environ['MXCY_GRAPH_PASSES'] = spec
        mod, step = inference_step(mx, cache, name, batch)
        steps[spec] = step
        outs[spec] = mod
    iters = 4 if batch == 1 else 1

    def many(step):
        return lambda: [step() for _ in range(iters)]
    times = interleaved_times({k: many(v) for k, v in steps.items()}, rounds, rotate=True)
    ref = outs['0'].get_outputs()[0].asnumpy()
    for spec in specs:
        got = outs[spec].get_outputs()[0].asnumpy()
        err = float(np.max(np.abs(got - ref)) / (np.max(np.abs(ref)) + 1e-30))
        if err > 1e-4:
            raise SystemExit(f"bench_zoo: {name} with passes {spec!r} differs from the "
                             f"bound graph by {err:.2e} (relative)")
        paired = float(np.median([b / a for a, b in zip(times[spec], times['0'])]))
        emit(BENCH, f'{name}_b{batch}_passes', 'mxcy', round(batch * iters / min(times[spec]),
                                                             2),
             'images/s', better='higher', network=name, batch=batch, passes=spec,
             speedup_vs_off_paired_median=round(paired, 3), rel_err_vs_off=err)


def train(mx, lib, cache, rounds, passes, emit):
    batch, steps = 64, 3
    sym, arg, aux = checkpoint(mx, cache, 'resnet18_v1')
    net = mx.sym.SoftmaxOutput(sym, name='softmax')
    mod = mx.mod.Module(net, data_names=['data'], label_names=['softmax_label'],
                        context=mx.cpu())
    mod.bind(data_shapes=[('data', (batch, 3, 32, 32))],
             label_shapes=[('softmax_label', (batch,))], for_training=True)
    mod.init_params(mx.init.Xavier())
    mod.set_params(arg, aux)
    mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.01,
                                                          'momentum': 0.9})
    rng = np.random.RandomState(0)
    data = mx.io.DataBatch([mx.nd.array(rng.uniform(-1, 1, (batch, 3, 32, 32)))],
                           [mx.nd.array(rng.randint(0, 1000, batch))])

    def step():
        mod.forward_backward(data)
        mod.update()
        mod.get_outputs()[0].wait_to_read()
        mx.nd.waitall()
    sec = timed_rounds(step, steps, rounds)
    emit(BENCH, 'resnet18_v1_train_b64_32px', lib, round(batch / sec, 2), 'images/s',
         better='higher', network='resnet18_v1', batch=batch, passes=passes)


# ---------------------------------------------------------------- --compare driver
def _run(cmd, env):
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    lines = [json.loads(t) for t in proc.stdout.splitlines() if t.startswith('{')]
    if proc.returncode:
        print(f"# {' '.join(cmd)} failed: {proc.stderr.strip()[-400:]}", file=sys.stderr)
    for line in lines:
        print(json.dumps(line), flush=True)
    return lines


def compare(args):
    base = [sys.executable, os.path.join(HERE, 'bench_zoo.py'), '--cache', args.cache,
            '--rounds', str(args.rounds), '--batches', *map(str, args.batches)]
    env = dict(os.environ, PYTHONPATH=ROOT)
    mx_env = dict(os.environ, OMP_NUM_THREADS='2')
    mx_env.pop('PYTHONPATH', None)
    torch_env = dict(mx_env)
    results = []
    figures = list(args.nets) + (['train'] if args.train else [])
    for alternation in range(args.alternations):
        for net in figures:
            sel = ['--train-only'] if net == 'train' else ['--nets', net]
            runs = [('mxcy', base + sel, env),
                    ('mxnet', [args.mxnet_python] + base[1:] + sel + ['--lib', 'mxnet'],
                     mx_env)]
            if net in TORCH_NETS or net == 'train':
                runs.append(('torch', [args.torch_python,
                                       os.path.join(HERE, 'peer_torch_zoo.py'),
                                       '--rounds', str(args.rounds), '--batches',
                                       *map(str, args.batches)] + sel, torch_env))
            if net in args.passes_nets:
                runs += [(f'mxcy-passes={spec}', base + sel + ['--passes', spec], env)
                         for spec in args.pass_variants]
            if alternation % 2:
                runs.reverse()
            for label, cmd, e in runs:
                for line in _run(cmd, e):
                    line['label'] = label
                    results.append(line)
    table(results)


TORCH_NETS = ('resnet18_v1', 'resnet50_v1', 'mobilenet1.0', 'alexnet', 'vgg11_bn',
              'squeezenet1.1')


def table(results):
    """Markdown: the best figure per library and mxcy ÷ each, then geometric means."""
    best, steal, load = {}, {}, {}
    for r in results:
        key = (r['figure'], r['label'])
        best[key] = max(best.get(key, 0), r['value'])
        steal.setdefault(r['figure'], []).append(r.get('steal_pct') or 0)
        load.setdefault(r['figure'], []).append(r.get('loadavg_1m') or 0)
    figures = list(dict.fromkeys(r['figure'] for r in results))
    labels = ['mxnet', 'torch'] + sorted({r['label'] for r in results
                                          if r['label'].startswith('mxcy-')})
    print('\n| figure (images/s) | mxcy | ' + ' | '.join(labels) + ' | ' +
          ' | '.join(f'mxcy ÷ {lab}' for lab in labels) + ' | steal % | load |')
    print('|---' * (2 * len(labels) + 4) + '|')
    logs = {lab: [] for lab in labels}
    for f in figures:
        m = best.get((f, 'mxcy'))
        row = [best.get((f, lab)) for lab in labels]
        ratios = [m / v if m and v else None for v in row]
        for k, r in zip(logs, ratios):
            if r and f != 'resnet18_v1_train_b64_32px':
                logs[k].append(math.log(r))
        cells = [f'{v:.1f}' if v else '–' for v in [m] + row]
        cells += [f'{r:.2f}' if r else '–' for r in ratios]
        print(f'| {f} | ' + ' | '.join(cells) + f' | {max(steal[f]):.0f} | '
              f'{min(load[f]):.1f}–{max(load[f]):.1f} |')
    for k, v in logs.items():
        if v:
            print(f'geometric mean of mxcy ÷ {k} (inference, {len(v)} figures): '
                  f'{math.exp(sum(v) / len(v)):.2f}')


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--lib', default='mxcy', help='mxcy (default) or mxnet')
    parser.add_argument('--cache', default=default_cache())
    parser.add_argument('--nets', nargs='*', default=list(NETWORKS), choices=list(NETWORKS))
    parser.add_argument('--batches', nargs='*', type=int, default=[1, 16])
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--train', action='store_true', help='also the ResNet-18 training')
    parser.add_argument('--train-only', action='store_true')
    parser.add_argument('--passes', default=None, help='mxcy: MXCY_GRAPH_PASSES for the bind')
    parser.add_argument('--compare', action='store_true')
    parser.add_argument('--ab', nargs='*', default=None,
                        help='mxcy: time these MXCY_GRAPH_PASSES specs against 0 in one '
                             'process, interleaved (e.g. --ab 1 fold fold,conv_act)')
    parser.add_argument('--alternations', type=int, default=2)
    parser.add_argument('--passes-nets', nargs='*', default=['resnet18_v1', 'mobilenet1.0'])
    parser.add_argument('--pass-variants', nargs='*', default=['0', 'fold', 'fold,conv_act'],
                        help='MXCY_GRAPH_PASSES values run beside the default (all passes)')
    parser.add_argument('--mxnet-python', default='/work/mxnet_venv/bin/python')
    parser.add_argument('--torch-python', default='/work/peers/torch/bin/python')
    args = parser.parse_args()
    if args.compare:
        compare(args)
        return
    if args.passes is not None:
        os.environ['MXCY_GRAPH_PASSES'] = args.passes
    sys.path.insert(0, HERE)
    from _common import emit, load
    mx = load(args.lib)
    passes = os.environ.get('MXCY_GRAPH_PASSES', '1') if args.lib == 'mxcy' else None
    if args.ab is not None:
        for name in args.nets:
            for batch in args.batches:
                passes_ab(mx, args.cache, name, batch, args.rounds,
                          ['0'] + [s for s in args.ab if s != '0'], emit)
        return
    if not args.train_only:
        for name in args.nets:
            for batch in args.batches:
                infer(mx, args.lib, args.cache, name, batch, args.rounds, passes, emit)
    if args.train or args.train_only:
        train(mx, args.lib, args.cache, args.rounds, passes, emit)


if __name__ == '__main__':
    main()
