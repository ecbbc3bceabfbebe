"""Character-level LSTM: the MXNet.jl char-LSTM tutorial ("generating random sentences
with an LSTM"), in mxcy.

A 2-layer LSTM (hidden 256, embedding 256) reads 32 characters at a time and predicts
each next character. The default text is part of Python's own standard library sources
(on every machine); ``--text FILE`` trains on another file. Training logs perplexity
(``mx.metric.Perplexity``) through Speedometer lines and per epoch on held-out text,
saves a checkpoint every epoch, and ``--sample N`` loads the last checkpoint and prints
N generated characters (softmax sampling at ``--temperature``).

Two ways to cut the text into sequences:
  * fixed length (default): consecutive 32-character windows, ``mx.mod.Module``;
  * ``--bucketing``: each line (cut into pieces of at most 32 characters) is a sentence,
    grouped by length by ``mx.rnn.BucketSentenceIter`` and trained with
    ``mx.mod.BucketingModule`` (one unrolled graph per bucket, parameters shared).
``--fused`` uses ``mx.rnn.FusedRNNCell`` (one RNN operator) instead of unrolled
LSTMCells. Character id 0 is padding: never a character, ignored by loss and metric.

    python char_lstm.py --num-epochs 1 --sample 300
    python char_lstm.py --num-epochs 0 --sample 500 --model-prefix /tmp/char_lstm
"""
import argparse
import json
import logging
import os
import tempfile
import time

import numpy as np

import mxcy as mx

STDLIB_FILES = ('argparse.py', 'textwrap.py', 'string.py', 'os.py', 'random.py',
                'collections/__init__.py', 'json/decoder.py', 'json/encoder.py')
PAD = 0


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--text', default=None, help='training text (default: stdlib sources)')
    parser.add_argument('--max-chars', type=int, default=None,
                        help='use only the first N characters of the text')
    parser.add_argument('--seq-len', type=int, default=32)
    parser.add_argument('--batch-size', type=int, default=32)
    parser.add_argument('--num-hidden', type=int, default=256)
    parser.add_argument('--num-embed', type=int, default=256)
    parser.add_argument('--num-layers', type=int, default=2)
    parser.add_argument('--num-epochs', type=int, default=1)
    parser.add_argument('--lr', type=float, default=0.01)
    parser.add_argument('--bucketing', action='store_true',
                        help='one sentence per line, bucketed by length (BucketingModule)')
    parser.add_argument('--fused', action='store_true', help='use FusedRNNCell')
    parser.add_argument('--max-batches', type=int, default=None,
                        help='stop each epoch after this many batches (smoke tests)')
    parser.add_argument('--disp-batches', type=int, default=20)
    parser.add_argument('--model-prefix', default=None,
                        help='checkpoint prefix (default: a temporary folder)')
    parser.add_argument('--sample', type=int, default=0,
                        help='after training, load the checkpoint and print N characters')
    parser.add_argument('--temperature', type=float, default=0.7)
    parser.add_argument('--prime', default='def ', help='text the sampler starts from')
    parser.add_argument('--seed', type=int, default=0)
    return parser.parse_args()


# ---------------------------------------------------------------- data
def read_text(path, max_chars):
    if path is not None:
        with open(path, encoding='utf-8', errors='replace') as f:
            text = f.read()
    else:
        root = os.path.dirname(os.__file__)
        parts = []
        for name in STDLIB_FILES:
            full = os.path.join(root, name)
            if os.path.exists(full):
                with open(full, encoding='utf-8', errors='replace') as f:
                    parts.append(f.read())
        if not parts:
            raise FileNotFoundError(f"no standard-library sources under {root}; pass --text")
        text = '\n'.join(parts)
    return text[:max_chars] if max_chars else text


def make_vocab(text):
    """{char: id}, ids from 1 in sorted order (0 is padding)."""
    return {ch: i + 1 for i, ch in enumerate(sorted(set(text)))}


def fixed_iters(text, vocab, args):
    ids = np.array([vocab[ch] for ch in text], dtype=np.float32)
    n = (len(ids) - 1) // args.seq_len
    data = ids[:n * args.seq_len].reshape(n, args.seq_len)
    label = ids[1:n * args.seq_len + 1].reshape(n, args.seq_len)
    split = max(args.batch_size, int(n * 0.9))
    train = mx.io.NDArrayIter(data[:split], label[:split], args.batch_size, shuffle=True,
                              last_batch_handle='discard')
    # whole batches only: a padded last batch cannot be trimmed from outputs that are
    # reshaped to (batch * seq_len, vocab)
    end = split + (n - split) // args.batch_size * args.batch_size
    val = mx.io.NDArrayIter(data[split:end], label[split:end], args.batch_size) \
        if end > split else None
    return train, val


def bucket_iters(text, vocab, args):
    pieces = []
    for line in text.splitlines(keepends=True):
        pieces.extend(line[i:i + args.seq_len] for i in range(0, len(line), args.seq_len))
    sentences, _ = mx.rnn.encode_sentences(pieces, vocab=vocab, invalid_label=PAD)
    buckets = [b for b in range(8, args.seq_len + 1, 8)] or [args.seq_len]
    if buckets[-1] != args.seq_len:
        buckets.append(args.seq_len)
    split = int(len(sentences) * 0.9)
    train = mx.rnn.BucketSentenceIter(sentences[:split], args.batch_size, buckets=buckets,
                                      invalid_label=PAD)
    try:
        val = mx.rnn.BucketSentenceIter(sentences[split:], args.batch_size, buckets=buckets,
                                        invalid_label=PAD)
    except ValueError:
        val = None
    return train, (val if val is not None and val.idx else None)


# ---------------------------------------------------------------- model
def make_stack(args, get_next_state=False):
    if args.fused:
        return mx.rnn.FusedRNNCell(args.num_hidden, num_layers=args.num_layers, mode='lstm',
                                   prefix='lstm_', get_next_state=get_next_state)
    stack = mx.rnn.SequentialRNNCell()
    for i in range(args.num_layers):
        stack.add(mx.rnn.LSTMCell(args.num_hidden, prefix=f'lstm_l{i}_'))
    return stack


def make_sym_gen(args, vocab_size):
    stack = make_stack(args)

    def sym_gen(seq_len):
        data = mx.sym.Variable('data')
        label = mx.sym.Variable('softmax_label')
        embed = mx.sym.Embedding(data, input_dim=vocab_size, output_dim=args.num_embed,
                                 name='embed')
        stack.reset()
        outputs, _ = stack.unroll(seq_len, inputs=embed, merge_outputs=True)
        pred = mx.sym.Reshape(outputs, shape=(-1, args.num_hidden))
        pred = mx.sym.FullyConnected(pred, num_hidden=vocab_size, name='pred')
        label = mx.sym.Reshape(label, shape=(-1,))
        pred = mx.sym.SoftmaxOutput(pred, label, name='softmax', use_ignore=True,
                                    ignore_label=PAD)
        return pred, ('data',), ('softmax_label',)
    return sym_gen


def train(args, text, vocab, prefix):
    vocab_size = len(vocab) + 1
    sym_gen = make_sym_gen(args, vocab_size)
    if args.bucketing:
        train_iter, val_iter = bucket_iters(text, vocab, args)
        mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=train_iter.default_bucket_key)
    else:
        train_iter, val_iter = fixed_iters(text, vocab, args)
        symbol, data_names, label_names = sym_gen(args.seq_len)
        mod = mx.mod.Module(symbol, data_names, label_names)
    counter = {'batches': 0}

    def count(param):
        counter['batches'] += 1
    tic = time.time()
    mod.fit(train_iter, eval_data=val_iter, num_epoch=args.num_epochs,
            eval_metric=mx.metric.Perplexity(ignore_label=PAD),
            optimizer='adam', optimizer_params={'learning_rate': args.lr, 'wd': 1e-5,
                                                'clip_gradient': 1.0},
            initializer=mx.init.Xavier(factor_type='in', magnitude=2.34),
            batch_end_callback=[mx.callback.Speedometer(args.batch_size, args.disp_batches),
                                count],
            epoch_end_callback=mx.callback.do_checkpoint(prefix),
            epoch_size=args.max_batches)
    elapsed = time.time() - tic
    sequences = counter['batches'] * args.batch_size
    print(f"trained {counter['batches']} batches ({sequences} sequences) in {elapsed:.1f} s: "
          f"{sequences / elapsed:.1f} sequences/s (validation included)")
    with open(f'{prefix}-config.json', 'w', encoding='utf-8') as f:
        json.dump({'vocab': vocab, 'num_hidden': args.num_hidden, 'num_embed': args.num_embed,
                   'num_layers': args.num_layers, 'fused': args.fused,
                   'epoch': args.num_epochs}, f)


# ---------------------------------------------------------------- sampling
def sample(args, prefix, length):
    with open(f'{prefix}-config.json', encoding='utf-8') as f:
        config = json.load(f)
    for key in ('num_hidden', 'num_embed', 'num_layers', 'fused'):
        setattr(args, key, config[key])
    vocab = config['vocab']
    chars = {i: ch for ch, i in vocab.items()}
    _, arg_params, aux_params = mx.model.load_checkpoint(prefix, config['epoch'])
    # one step at a time: the states are inputs, the next states outputs
    stack = make_stack(args, get_next_state=True)
    begin = stack.begin_state(func=mx.sym.Variable)
    data = mx.sym.Variable('data')
    embed = mx.sym.Embedding(data, input_dim=len(vocab) + 1, output_dim=args.num_embed,
                             name='embed')
    outputs, states = stack.unroll(1, inputs=embed, begin_state=begin, merge_outputs=True)
    pred = mx.sym.FullyConnected(mx.sym.Reshape(outputs, shape=(-1, args.num_hidden)),
                                 num_hidden=len(vocab) + 1, name='pred')
    net = mx.sym.Group([mx.sym.softmax(pred)] + states)
    state_shapes = {s.name: tuple(1 if d == 0 else d for d in shape)
                    for s, shape in zip(begin, stack.state_shape)}
    exe = net.simple_bind(mx.cpu(), grad_req='null', data=(1, 1), **state_shapes)
    exe.copy_params_from(arg_params, aux_params, allow_extra_params=True)
    rng = np.random.default_rng(args.seed)
    prime = [ch for ch in args.prime if ch in vocab] or [chars[1]]
    text, next_id = list(prime), vocab[prime[0]]
    for step in range(len(prime) - 1 + length):
        exe.arg_dict['data'][:] = next_id
        outs = exe.forward()
        for s, new in zip(begin, outs[1:]):
            new.copyto(exe.arg_dict[s.name])
        if step + 1 < len(prime):
            next_id = vocab[prime[step + 1]]
            continue
        probs = outs[0].asnumpy()[0].astype(np.float64)
        probs[PAD] = 0
        logits = np.log(np.maximum(probs, 1e-30)) / args.temperature
        probs = np.exp(logits - logits.max())
        next_id = int(rng.choice(len(probs), p=probs / probs.sum()))
        text.append(chars[next_id])
    return ''.join(text)


def main():
    logging.basicConfig(level=logging.INFO, format='%(asctime)s %(message)s')
    args = parse_args()
    np.random.seed(args.seed)
    mx.random.seed(args.seed)
    prefix = args.model_prefix or os.path.join(tempfile.mkdtemp(), 'char_lstm')
    os.makedirs(os.path.dirname(os.path.abspath(prefix)), exist_ok=True)
    if args.num_epochs > 0:
        text = read_text(args.text, args.max_chars)
        vocab = make_vocab(text)
        print(f"text: {len(text)} characters, vocabulary {len(vocab)}; "
              f"{'bucketing' if args.bucketing else 'fixed length'} {args.seq_len}, "
              f"{'fused' if args.fused else 'unrolled'} LSTM {args.num_layers}x"
              f"{args.num_hidden}")
        train(args, text, vocab, prefix)
        print(f"checkpoint: {prefix}")
    if args.sample:
        generated = sample(args, prefix, args.sample)
        print(f"----- sample ({args.sample} characters, temperature {args.temperature})")
        print(generated)
        print('-----')


if __name__ == '__main__':
    main()
