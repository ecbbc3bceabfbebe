#!/usr/bin/env python3
"""The PyTorch peer of bench_zoo.py: the model-zoo networks that are easy to write, by hand
(torchvision is not installed in the peer venv), with random weights, in eval mode under
``torch.inference_mode()``; and ResNet-18 training on 32×32 inputs, batch 64, SGD momentum.

    /work/peers/torch/bin/python bench/peer_torch_zoo.py [--nets ...] [--train-only]

The architectures follow Gluon's model zoo (resnet18_v1 / resnet50_v1: BasicBlock /
Bottleneck v1 with the stride on the 3×3 conv of the bottleneck, as Gluon's v1; mobilenet1.0;
alexnet; vgg11_bn; squeezenet1.1), so the arithmetic matches the MXNet graphs. One JSON
line per figure, the same fields as bench_zoo.py.
"""
import argparse
import json
import math
import os
import time

import torch
from torch import nn

SIDE = 224


def conv_bn(cin, cout, k, s=1, p=0, groups=1, relu=True):
    layers = [nn.Conv2d(cin, cout, k, s, p, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    return nn.Sequential(*(layers + [nn.ReLU(inplace=True)] if relu else layers))


class Basic(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.body = nn.Sequential(conv_bn(cin, cout, 3, stride, 1),
                                  conv_bn(cout, cout, 3, 1, 1, relu=False))
        self.down = conv_bn(cin, cout, 1, stride, relu=False) \
            if stride != 1 or cin != cout else None

    def forward(self, x):
        r = x if self.down is None else self.down(x)
        return torch.relu(self.body(x) + r)


class Bottleneck(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        mid = cout // 4
        self.body = nn.Sequential(conv_bn(cin, mid, 1, stride), conv_bn(mid, mid, 3, 1, 1),
                                  conv_bn(mid, cout, 1, relu=False))
        self.down = conv_bn(cin, cout, 1, stride, relu=False) \
            if stride != 1 or cin != cout else None

    def forward(self, x):
        r = x if self.down is None else self.down(x)
        return torch.relu(self.body(x) + r)


def resnet(block, layers, channels):
    mods = [conv_bn(3, 64, 7, 2, 3), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for i, (n, c) in enumerate(zip(layers, channels)):
        for j in range(n):
            mods.append(block(cin, c, 2 if j == 0 and i > 0 else 1))
            cin = c
    mods += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, 1000)]
    return nn.Sequential(*mods)


def mobilenet():
    dw = [32, 64, 128, 128, 256, 256, 512, 512, 512, 512, 512, 512, 1024]
    cs = [64, 128, 128, 256, 256, 512, 512, 512, 512, 512, 512, 1024, 1024]
    ss = [1, 2, 1, 2, 1, 2, 1, 1, 1, 1, 1, 2, 1]
    mods = [conv_bn(3, 32, 3, 2, 1)]
    for d, c, s in zip(dw, cs, ss):
        mods += [conv_bn(d, d, 3, s, 1, groups=d), conv_bn(d, c, 1)]
    mods += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(1024, 1000)]
    return nn.Sequential(*mods)


def alexnet():
    r = nn.ReLU(inplace=True)
    return nn.Sequential(
        nn.Conv2d(3, 64, 11, 4, 2), r, nn.MaxPool2d(3, 2), nn.Conv2d(64, 192, 5, padding=2), r,
        nn.MaxPool2d(3, 2), nn.Conv2d(192, 384, 3, padding=1), r,
        nn.Conv2d(384, 256, 3, padding=1), r, nn.Conv2d(256, 256, 3, padding=1), r,
        nn.MaxPool2d(3, 2), nn.Flatten(), nn.Linear(256 * 6 * 6, 4096), r, nn.Dropout(),
        nn.Linear(4096, 4096), r, nn.Dropout(), nn.Linear(4096, 1000))


def vgg11_bn():
    mods, cin = [], 3
    for v in [64, 'M', 128, 'M', 256, 256, 'M', 512, 512, 'M', 512, 512, 'M']:
        if v == 'M':
            mods.append(nn.MaxPool2d(2, 2))
        else:
            mods += [nn.Conv2d(cin, v, 3, padding=1), nn.BatchNorm2d(v), nn.ReLU(inplace=True)]
            cin = v
    r = nn.ReLU(inplace=True)
    mods += [nn.Flatten(), nn.Linear(512 * 7 * 7, 4096), r, nn.Dropout(),
             nn.Linear(4096, 4096), r, nn.Dropout(), nn.Linear(4096, 1000)]
    return nn.Sequential(*mods)


class Fire(nn.Module):
    def __init__(self, cin, s, e):
        super().__init__()
        self.squeeze = nn.Sequential(nn.Conv2d(cin, s, 1), nn.ReLU(inplace=True))
        self.e1 = nn.Sequential(nn.Conv2d(s, e, 1), nn.ReLU(inplace=True))
        self.e3 = nn.Sequential(nn.Conv2d(s, e, 3, padding=1), nn.ReLU(inplace=True))

    def forward(self, x):
        x = self.squeeze(x)
        return torch.cat([self.e1(x), self.e3(x)], 1)


def squeezenet():
    pool = nn.MaxPool2d(3, 2, ceil_mode=True)
    return nn.Sequential(
        nn.Conv2d(3, 64, 3, 2), nn.ReLU(inplace=True), pool, Fire(64, 16, 64),
        Fire(128, 16, 64), pool, Fire(128, 32, 128), Fire(256, 32, 128), pool,
        Fire(256, 48, 192), Fire(384, 48, 192), Fire(384, 64, 256), Fire(512, 64, 256),
        nn.Dropout(0.5), nn.Conv2d(512, 1000, 1), nn.ReLU(inplace=True),
        nn.AdaptiveAvgPool2d(1), nn.Flatten())


NETS = {'resnet18_v1': lambda: resnet(Basic, [2, 2, 2, 2], [64, 128, 256, 512]),
        'resnet50_v1': lambda: resnet(Bottleneck, [3, 4, 6, 3], [256, 512, 1024, 2048]),
        'mobilenet1.0': mobilenet, 'alexnet': alexnet, 'vgg11_bn': vgg11_bn,
        'squeezenet1.1': squeezenet}


def emit(figure, value, **extra):
    line = {'bench': 'zoo', 'figure': figure, 'lib': 'torch', 'value': value,
            'unit': 'images/s', 'better': 'higher', 'torch_version': torch.__version__,
            'threads': torch.get_num_threads(), 'cpus': len(os.sched_getaffinity(0)),
            'loadavg_1m': round(os.getloadavg()[0], 2)}
    line.update(extra)
    print(json.dumps(line), flush=True)


def timed_rounds(step, iters, rounds):
    step()
    best = math.inf
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(iters):
            step()
        best = min(best, (time.perf_counter() - t) / iters)
    return best


def infer(name, batch, rounds):
    torch.manual_seed(0)
    net = NETS[name]().eval()
    x = torch.rand(batch, 3, SIDE, SIDE) * 2 - 1
    with torch.inference_mode():
        sec = timed_rounds(lambda: net(x), 4 if batch == 1 else 1, rounds)
    emit(f'{name}_b{batch}', round(batch / sec, 2), network=name, batch=batch)


def train(rounds):
    torch.manual_seed(0)
    net = NETS['resnet18_v1']().train()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    x = torch.rand(64, 3, 32, 32) * 2 - 1
    y = torch.randint(0, 1000, (64,))

    def step():
        opt.zero_grad()
        loss_fn(net(x), y).backward()
        opt.step()
    sec = timed_rounds(step, 3, rounds)
    emit('resnet18_v1_train_b64_32px', round(64 / sec, 2), network='resnet18_v1', batch=64)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--nets', nargs='*', default=list(NETS))
    parser.add_argument('--batches', nargs='*', type=int, default=[1, 16])
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--train-only', action='store_true')
    args = parser.parse_args()
    if args.train_only:
        train(args.rounds)
        return
    for name in args.nets:
        if name in NETS:
            for batch in args.batches:
                infer(name, batch, args.rounds)


if __name__ == '__main__':
    main()
