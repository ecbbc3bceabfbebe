#!/usr/bin/env bash
# Run every benchmark for mxcy and, where installed, the peers; JSON lines to stdout.
#   bash bench/run_all.sh > /tmp/results.jsonl      (then summarise into bench/RESULTS.md)
set -u
cd "$(dirname "$0")"
PEERS="${PEERS_DIR:-/work/peers}"
MPIRUN="$(dirname "$(command -v python3)")/mpirun"
command -v mpirun >/dev/null && MPIRUN="$(command -v mpirun)"
for script in bench_engine.py bench_ops.py bench_executor.py bench_train.py bench_module_ctx.py bench_profiler.py bench_frontend.py bench_bnconv.py bench_np.py bench_np_gluon.py; do
    python3 "$script"
    if [ -x "$PEERS/mxnet/bin/python" ] && [ "$script" != bench_frontend.py ]; then
        "$PEERS/mxnet/bin/python" "$script" --lib mxnet 2>/dev/null || true
    fi
done
[ -x "$PEERS/torch/bin/python" ] && "$PEERS/torch/bin/python" peer_torch_engine.py
[ -x "$PEERS/torch/bin/python" ] && "$PEERS/torch/bin/python" peer_torch_train.py
"$MPIRUN" --allow-run-as-root --oversubscribe -np 2 python3 bench_dist.py
