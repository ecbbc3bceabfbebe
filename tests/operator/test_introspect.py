"""mx.operator's introspection of the registry (operator/introspect.py)."""
import mxcy as mx

def test_introspection():
    ops = mx.operator.get_all_registered_operators()
    assert 'FullyConnected' in ops and '_linalg_gemm' in ops and ops == sorted(ops)
    args = mx.operator.get_operator_arguments('FullyConnected')
    assert args.narg == 6 and args.names[:3] == ['data', 'weight', 'bias']
    assert args.types[3] == 'int, required'
    assert mx.operator.get_operator_arguments('Concat').types[0] == 'NDArray-or-Symbol[]'
