#!/usr/bin/env python3
"""Export MXNet 1.9.1's Gluon model-zoo networks, random weights, for bench/bench_zoo.py.

Run in the MXNet peer venv (never in CI; the files are large and stay out of the repo):

    /work/mxnet_venv/bin/python tools/mxnet_zoo_export.py [--cache DIR] [--only NAME ...]

Each network is built with ``mx.gluon.model_zoo.vision.get_model(name)`` (no download:
``pretrained=False``), initialized with Xavier weights from a fixed seed, hybridized, run
forward once at its input size (batch 1; 299×299 for inceptionv3, 224×224 otherwise) in
prediction mode and exported as ``<cache>/<name>-symbol.json`` + ``<name>-0000.params``,
the files ``mx.model.load_checkpoint(prefix, 0)`` reads. The cache is ``--cache``, else
``$MXCY_ZOO_CACHE``, else ``~/.cache/mxcy-zoo``. The random BatchNorm statistics are
also set from the seed (moving_mean ~ N(0, 0.1), moving_var ~ U(0.5, 1.5)), so an
inference graph pass that folds them is exercised with non-trivial values.
"""
import argparse
import os

import mxnet as mx
import numpy as np

NETWORKS = {'resnet18_v1': 224, 'resnet50_v1': 224, 'resnet50_v2': 224, 'mobilenet1.0': 224,
            'mobilenetv2_1.0': 224, 'squeezenet1.1': 224, 'densenet121': 224,
            'inceptionv3': 299, 'vgg11_bn': 224, 'alexnet': 224}


def default_cache():
    return os.environ.get('MXCY_ZOO_CACHE') or os.path.join(
        os.path.expanduser('~'), '.cache', 'mxcy-zoo')


def export(name, side, cache, seed=0):
    mx.random.seed(seed)
    rng = np.random.RandomState(seed)
    net = mx.gluon.model_zoo.vision.get_model(name, pretrained=False)
    net.initialize(mx.init.Xavier(magnitude=2.0))
    x = mx.nd.array(rng.uniform(-1, 1, (1, 3, side, side)).astype(np.float32))
    net(x)                                  # resolve deferred shapes
    for pname, param in sorted(net.collect_params().items()):
        if pname.endswith('running_mean'):
            param.set_data(mx.nd.array(rng.normal(0, 0.1, param.shape)))
        elif pname.endswith('running_var'):
            param.set_data(mx.nd.array(rng.uniform(0.5, 1.5, param.shape)))
        elif pname.endswith(('gamma', 'beta')):
            param.set_data(mx.nd.array(rng.uniform(0.5, 1.5, param.shape)
                                       if pname.endswith('gamma')
                                       else rng.normal(0, 0.1, param.shape)))
    net.hybridize()
    net(x).wait_to_read()
    prefix = os.path.join(cache, name)
    net.export(prefix, epoch=0)
    return prefix


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--cache', default=default_cache())
    parser.add_argument('--only', nargs='*', choices=sorted(NETWORKS))
    args = parser.parse_args()
    os.makedirs(args.cache, exist_ok=True)
    for name in args.only or NETWORKS:
        print('exported', export(name, NETWORKS[name], args.cache), flush=True)


if __name__ == '__main__':
    main()
