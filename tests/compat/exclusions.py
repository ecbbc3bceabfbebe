"""The one list of MXNet 1.9.1 names that mxcy does not provide, each with its reason.

Keys are ``"<namespace>:<name>"`` as in mxnet191_api.json. Only what a CPU, dense-storage
library cannot or should not offer belongs here (GPU-only, sparse storage, deprecated
``_v1`` operators, quantization/TensorRT/ONNX/MKLDNN internals, C handles); a name that is
merely not written yet does not: test_api_surface.py reports it as missing. The issue caps
this list at 5% of the manifest's names (test_exclusions_within_budget).
"""
_V1 = "deprecated _v1 operator (MXNet keeps it for pre-1.0 graphs; use the current op)"
_SPARSE = "sparse storage (row_sparse/csr): mxcy arrays are dense"
_QUANT = "INT8 quantization internals (MKLDNN calibration/quantized kernels)"
_HANDLE = ("constructor takes MXNet's C handle; arrays and symbols are built by "
           "mx.nd.array / mx.sym.Variable, whose signatures match")
_BACKWARD = "an operator's internal backward node that MXNet exposes by accident"

EXCLUSIONS = {}
for _ns in ('nd', 'sym'):
    EXCLUSIONS.update({
        f'{_ns}:BatchNorm_v1': _V1, f'{_ns}:Convolution_v1': _V1,
        f'{_ns}:Pooling_v1': _V1,
        f'{_ns}:cast_storage': _SPARSE,
        f'{_ns}:IdentityAttachKLSparseReg': "sparsity regulariser of sparse autoencoders, "
                                            "an undocumented legacy op (" + _SPARSE + ")",
    })
EXCLUSIONS.update({
    'nd:NDArray': _HANDLE,
    'sym:Symbol': _HANDLE,
    'nd.contrib:SparseEmbedding': _SPARSE,
    'nd.contrib:getnnz': _SPARSE,
    'nd.contrib:dgl_adjacency': _SPARSE + " (DGL graph ops on CSR matrices)",
    'nd.contrib:dgl_csr_neighbor_non_uniform_sample': _SPARSE + " (DGL graph sampling)",
    'nd.contrib:dgl_csr_neighbor_uniform_sample': _SPARSE + " (DGL graph sampling)",
    'nd.contrib:dgl_graph_compact': _SPARSE + " (DGL graph ops on CSR matrices)",
    'nd.contrib:dgl_subgraph': _SPARSE + " (DGL graph ops on CSR matrices)",
    'nd.contrib:SyncBatchNorm': "multi-GPU synchronised BatchNorm (GPU-only)",
    'nd.contrib:count_sketch': "GPU-only in MXNet 1.9.1 (its CPU build raises "
                               "'CountSketch is only available for GPU')",
    'nd.contrib:edge_id': _SPARSE + " (looks up edge ids in a CSR graph; MXNet's CPU "
                                    "build rejects dense input)",
    'nd.contrib:fft': "GPU-only in MXNet 1.9.1 (its CPU build raises 'fft is only "
                      "available for GPU')",
    'nd.contrib:ifft': "GPU-only in MXNet 1.9.1 (its CPU build raises 'ifft is only "
                       "available for GPU')",
    'Parameter:row_sparse_data': _SPARSE,
    'Parameter:list_row_sparse_data': _SPARSE,
    'context:gpu_memory_info': "GPU only: mxcy runs on CPUs (mx.context.num_gpus() is 0)",
    'io:ImageRecordIter_v1': "deprecated _v1 iterator (the pre-1.0 decoder; "
                             "ImageRecordIter is the current one)",
    'io:ImageRecordUInt8Iter_v1': "deprecated _v1 iterator (the pre-1.0 decoder; "
                                  "ImageRecordUInt8Iter is the current one)",
    'io:MXDataIter': _HANDLE.replace('arrays and symbols are built by mx.nd.array / '
                                     'mx.sym.Variable', 'iterators are built by name '
                                     '(mx.io.MNISTIter ...)'),
    'kv:KVStore': _HANDLE.replace('arrays and symbols are built by mx.nd.array / '
                                  'mx.sym.Variable', 'stores are built by mx.kv.create'),
    'kv:KVStoreServer': "the parameter-server's server process: mxcy's dist_sync runs over "
                        "MPI ranks, with no server role",
    'profiler:set_kvstore_handle': "profiles parameter-server server processes, which "
                                   "mxcy's MPI dist_sync does not have",
    'nd:get_indexing_dispatch_code': "MXNet's private NDArray-indexing helper, in mx.nd's "
                                     "namespace by accident (not documented API)",
    'nd:indexing_key_expand_implicit_axes': "MXNet's private NDArray-indexing helper, in "
                                            "mx.nd's namespace by accident",
    'nd.contrib:backward_gradientmultiplier': _BACKWARD,
    'nd.contrib:backward_hawkesll': _BACKWARD,
    'nd.contrib:backward_index_copy': _BACKWARD,
    'nd.contrib:backward_quadratic': _BACKWARD,
    'test_utils:create_sparse_array': _SPARSE,
    'test_utils:create_sparse_array_zd': _SPARSE,
    'test_utils:rand_sparse_ndarray': _SPARSE,
    'test_utils:shuffle_csr_column_indices': _SPARSE,
})
for _name in ('quantize', 'quantize_asym', 'quantize_v2', 'requantize', 'dequantize',
              'calibrate_entropy', 'quantized_act', 'quantized_batch_norm',
              'quantized_concat', 'quantized_conv', 'quantized_elemwise_add',
              'quantized_elemwise_mul', 'quantized_embedding', 'quantized_flatten',
              'quantized_fully_connected', 'quantized_pooling', 'quantized_rnn'):
    EXCLUSIONS[f'nd.contrib:{_name}'] = _QUANT
EXCLUSIONS.update({
    'np:float64': "numpy.float64 itself (as in MXNet): its constructor's parameter name is "
                  "the installed NumPy's ('value' in NumPy 2, 'x' in MXNet's NumPy 1.23)",
    'np:ndarray': "MXNet builds an ndarray from a C handle (ndarray(handle, writable)); mxcy "
                  "arrays come from mx.np.array/zeros/... or as_np_ndarray(), not handles",
})
_FINANCIAL = ("MXNet 1.9.1's own version always raises: NumPy 1.20 removed its financial "
              "functions (NEP 32; they live in numpy_financial), so there is no behaviour "
              "to keep")
for _name in ('mirr', 'npv', 'ppmt', 'pv', 'rate'):
    EXCLUSIONS[f'np:{_name}'] = _FINANCIAL
EXCLUSIONS['npx:check_call'] = ("checks the return code of MXNet's C API; mxcy has no C "
                                "API, its errors are Python exceptions")
