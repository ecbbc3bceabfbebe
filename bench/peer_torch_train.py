#!/usr/bin/env python3
"""The PyTorch peer of bench_train.py: the same MLP epoch, LeNet images/s and char-LSTM
sequences/s as plain PyTorch loops (lib "torch"), one JSON line per figure.

    /work/peers/torch/bin/python bench/peer_torch_train.py [--only char_lstm]
"""
import argparse
import json
import os
import time

import numpy as np
import torch
from torch import nn


def emit(figure, value, unit, **extra):
    line = {'bench': 'train', 'figure': figure, 'lib': 'torch', 'value': value, 'unit': unit,
            'torch_version': torch.__version__, 'threads': torch.get_num_threads(),
            'cpus': len(os.sched_getaffinity(0)), 'loadavg_1m': round(os.getloadavg()[0], 2)}
    line.update(extra)
    print(json.dumps(line), flush=True)


def mlp_epoch():
    n, batch = 60000, 100
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.random((n, 784), dtype=np.float32))
    y = torch.from_numpy(rng.integers(0, 10, n))
    best = float('inf')
    for _ in range(2):
        net = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(),
                            nn.Linear(64, 10))
        opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
        loss_fn = nn.CrossEntropyLoss()
        t = time.perf_counter()
        correct = 0
        for i in range(0, n, batch):
            xb, yb = x[i:i + batch], y[i:i + batch]
            out = net(xb)
            loss = loss_fn(out, yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            correct += (out.argmax(1) == yb).sum().item()     # the metric, as fit does
        best = min(best, time.perf_counter() - t)
    emit('mlp_epoch_s', round(best, 4), 's', better='lower', samples=n, batch=batch)


def lenet_images():
    batch, nbatch = 100, 20
    net = nn.Sequential(nn.Conv2d(1, 20, 5), nn.Tanh(), nn.MaxPool2d(2, 2),
                        nn.Conv2d(20, 50, 5), nn.Tanh(), nn.MaxPool2d(2, 2), nn.Flatten(),
                        nn.Linear(800, 500), nn.Tanh(), nn.Linear(500, 10))
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.random((batch * nbatch, 1, 28, 28), dtype=np.float32))
    y = torch.from_numpy(rng.integers(0, 10, batch * nbatch))
    best = float('inf')
    for _ in range(4):
        t = time.perf_counter()
        for i in range(0, batch * nbatch, batch):
            loss = loss_fn(net(x[i:i + batch]), y[i:i + batch])
            opt.zero_grad()
            loss.backward()
            opt.step()
        best = min(best, time.perf_counter() - t)
    emit('lenet_images_per_s', round(batch * nbatch / best, 1), 'images/s', better='higher',
         batch=batch)


def char_lstm():
    """bench_train.py's char-LSTM: embedding 65 -> 256, 2-layer LSTM 256, FC 65, softmax
    cross-entropy, Adam (lr 0.002); seq 32, batch 32, 8 batches, best of 2 rounds."""
    seq, batch, vocab, hidden, layers, nbatch = 32, 32, 65, 256, 2, 8

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(vocab, hidden)
            self.lstm = nn.LSTM(hidden, hidden, layers)
            self.pred = nn.Linear(hidden, vocab)

        def forward(self, x):                       # x (batch, seq)
            out, _ = self.lstm(self.embed(x).transpose(0, 1))
            return self.pred(out.transpose(0, 1).reshape(-1, hidden))
    net = Net()
    opt = torch.optim.Adam(net.parameters(), lr=0.002)
    loss_fn = nn.CrossEntropyLoss()
    rng = np.random.default_rng(0)
    x = rng.integers(0, vocab, (batch * nbatch, seq))
    y = torch.from_numpy(np.roll(x, -1, axis=1))
    x = torch.from_numpy(x)
    best, cpu = float('inf'), float('inf')
    for _ in range(3):
        t, c = time.perf_counter(), time.process_time()
        for i in range(0, batch * nbatch, batch):
            loss = loss_fn(net(x[i:i + batch]), y[i:i + batch].reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
        best = min(best, time.perf_counter() - t)
        cpu = min(cpu, time.process_time() - c)
    emit('char_lstm_seq_per_s', round(batch * nbatch / best, 1), 'sequences/s',
         better='higher', seq=seq, batch=batch, hidden=hidden, layers=layers,
         cpu_ms_per_batch=round(cpu / nbatch * 1e3, 1))


FIGURES = {'mlp': mlp_epoch, 'lenet': lenet_images, 'char_lstm': char_lstm}

if __name__ == '__main__':
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--only', default=None, choices=list(FIGURES))
    only = parser.parse_args().only
    for name, fig in FIGURES.items():
        if only in (None, name):
            fig()
