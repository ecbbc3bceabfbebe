#!/usr/bin/env bash
# Create the peer environments used by bench/ (outside the repo), idempotently.
#   /work/peers/mxnet : MXNet 1.9.1 (CPU wheel) + NumPy 1.23.5 (MXNet 1.x needs NumPy < 2)
#   /work/peers/torch : PyTorch 2.13.0 (CPU) + NumPy
# Only torch==2.13.0: it is the CPU wheel available locally; other versions pull gigabytes.
# Usage: bash bench/peers.sh [PEERS_DIR]   (default /work/peers)
set -euo pipefail
PEERS="${1:-${PEERS_DIR:-/work/peers}}"
PY="${PYTHON:-python3}"
mkdir -p "$PEERS"

ensure() {  # ensure NAME IMPORT_CHECK PIP_ARGS...
    local name="$1" check="$2"; shift 2
    local venv="$PEERS/$name"
    if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "$check" >/dev/null 2>&1; then
        echo "peers.sh: $venv ok ($("$venv/bin/python" -c "$check; print(v)"))"
        return 0
    fi
    [ -x "$venv/bin/python" ] || "$PY" -m venv "$venv"
    "$venv/bin/pip" install "$@"
    "$venv/bin/python" -c "$check; print('peers.sh: $venv ready:', v)"
}

ensure mxnet "import mxnet, numpy; v = (mxnet.__version__, numpy.__version__)" \
    mxnet==1.9.1 numpy==1.23.5
ensure torch "import torch, numpy; v = (torch.__version__, numpy.__version__)" \
    torch==2.13.0 numpy
