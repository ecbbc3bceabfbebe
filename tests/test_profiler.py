"""mx.profiler: the Chrome trace of the engine's own records, user objects, aggregates."""
import json
import threading
import time

import numpy as np
import pytest

import mxcy as mx
from mxcy import _engine
from mxcy.base import MXNetError

P = mx.profiler


@pytest.fixture
def prof(tmp_path):
    """A fresh profiler writing to tmp_path; stopped and emptied afterwards (with the
    engine settings restored)."""
    saved = (mx.engine.engine_type(), mx.engine.num_workers())
    path = tmp_path / 'trace.json'
    P.set_config(profile_all=True, aggregate_stats=True, filename=str(path))
    P.dumps(reset=True)
    P.dump()                        # drop anything recorded before this test
    yield path
    P.set_state('stop')
    P.dump()
    P.dumps(reset=True)
    P.set_config()
    if mx.engine.engine_type() != saved[0]:
        mx.engine.set_engine_type(saved[0])
    if mx.engine.num_workers() != saved[1]:
        mx.engine.set_num_workers(saved[1])


def load(path):
    P.dump()
    with open(path) as f:
        return json.load(f)


def ops(doc, cat='operator'):
    return [e for e in doc['traceEvents'] if e.get('cat') == cat and e['ph'] == 'X']


def thread_names(doc):
    return {e['tid']: e['args']['name'] for e in doc['traceEvents']
            if e['ph'] == 'M' and e['name'] == 'thread_name'}


def test_every_op_of_a_small_graph(engine_config, prof):
    P.set_state('run')
    a = mx.nd.array(np.arange(64 * 64, dtype=np.float32).reshape(64, 64))
    b = a * 2
    c = mx.nd.dot(a, b)
    d = c + a
    d.wait_to_read()
    P.set_state('stop')
    doc = load(prof)
    events = ops(doc)
    names = thread_names(doc)
    ids = {k: P.var_id(x) for k, x in dict(a=a, b=b, c=c, d=d).items()}
    assert len({e['args']['seq'] for e in events}) == len(events)
    for e in events:
        assert e['tid'] in names, e
        assert e['dur'] >= 0 and e['args']['wait_us'] >= 0
        assert e['ts'] == pytest.approx(e['args']['push_ts'] + e['args']['wait_us'],
                                        abs=2e-3)
    by_write = {tuple(e['args']['writes']): e for e in events}
    assert by_write[(ids['b'],)]['args']['reads'] == [ids['a']]
    gemm = by_write[(ids['c'],)]
    assert gemm['name'] == 'gemm'
    assert sorted(gemm['args']['reads']) == sorted([ids['a'], ids['b']])
    assert sorted(by_write[(ids['d'],)]['args']['reads']) == sorted([ids['c'], ids['a']])
    # the write of b ends before the gemm that reads it starts, and so on down the graph
    assert by_write[(ids['b'],)]['ts'] + by_write[(ids['b'],)]['dur'] <= gemm['ts'] + 1e-3
    assert gemm['ts'] + gemm['dur'] <= by_write[(ids['d'],)]['ts'] + 1e-3
    me = threading.get_native_id()
    workers = {t for t, n in names.items() if n.startswith('engine worker')}
    if engine_config == 'NaiveEngine':
        assert {e['tid'] for e in events} == {me}
    else:
        assert {e['tid'] for e in events} <= workers | {me}
        assert len(workers) <= engine_config
    assert names[me] == 'client thread MainThread'


def test_wait_from_push_to_start_is_measured(prof):
    mx.engine.set_engine_type('ThreadedEngine')
    x = mx.engine.new_var()
    P.set_state('run')
    mx.engine.push(lambda: time.sleep(0.05), writes=[x], name='slow_writer')
    mx.engine.push(lambda: None, reads=[x], name='reader')
    mx.engine.wait(x)
    P.set_state('stop')
    events = {e['name']: e for e in ops(load(prof))}
    slow, reader = events['slow_writer'], events['reader']
    assert slow['dur'] >= 45e3
    assert reader['ts'] >= slow['ts'] + slow['dur']
    # pushed right after the slow op, the reader waited about as long as it ran
    assert reader['args']['wait_us'] >= slow['ts'] + slow['dur'] - reader['args']['push_ts']
    assert reader['args']['wait_us'] >= 40e3
    assert reader['args']['reads'] == [P.var_id(x)] and slow['args']['writes'] == [P.var_id(x)]


def test_shared_kernel_shows_its_parts(prof):
    mx.engine.set_engine_type('ThreadedEngine')
    mx.engine.set_num_workers(2)
    assert mx.engine.kernel_split()
    a = mx.nd.ones((384, 384))
    mx.nd.waitall()
    helped0 = mx.engine.stats()['helped_parts']
    P.set_state('run')
    outs = [mx.nd.dot(a, a) for _ in range(4)]
    mx.nd.waitall()
    P.set_state('stop')
    doc = load(prof)
    helped = mx.engine.stats()['helped_parts'] - helped0
    gemms = {e['args']['seq']: e for e in ops(doc) if e['name'] == 'gemm'}
    assert len(gemms) == len(outs)
    parts = ops(doc, 'kernel_part')
    assert parts
    elsewhere = 0
    for seq, op in gemms.items():
        mine = [p for p in parts if p['args']['seq'] == seq]
        nparts = mine[0]['args']['nparts']
        assert nparts > 1 and sorted(p['args']['part'] for p in mine) == list(range(nparts))
        for p in mine:      # every part, on whichever worker, ends inside its op
            assert op['ts'] - 1e-3 <= p['ts'] and p['ts'] + p['dur'] <= \
                op['ts'] + op['dur'] + 1e-3
            assert p['name'] == 'gemm'
        elsewhere += sum(p['tid'] != op['tid'] for p in mine)
    # the parts another worker ran are exactly the ones the engine counts as helped (a
    # helper adds to that count just after its last part: give it a moment)
    for _ in range(200):
        if elsewhere == helped:
            break
        time.sleep(0.005)
        helped = mx.engine.stats()['helped_parts'] - helped0
    assert elsewhere == helped
    names = thread_names(doc)
    assert all(names[p['tid']].startswith('engine worker') for p in parts)


def test_pause_resume_excludes_ops_pushed_while_paused(engine_config, prof):
    x = mx.engine.new_var()
    P.set_state('run')
    mx.engine.push(lambda: None, writes=[x], name='before_pause')
    P.pause()
    mx.engine.push(lambda: None, writes=[x], name='while_paused')
    P.resume()
    mx.engine.push(lambda: None, writes=[x], name='after_resume')
    mx.engine.wait(x)
    P.set_state('stop')
    mx.engine.push(lambda: None, writes=[x], name='after_stop')
    mx.engine.wait(x)
    names = [e['name'] for e in ops(load(prof))]
    assert 'before_pause' in names and 'after_resume' in names
    assert 'while_paused' not in names and 'after_stop' not in names


def test_off_records_nothing(prof):
    a = mx.nd.ones((8, 8))
    (a + 1).wait_to_read()
    assert not any(recs for _, _, _, recs in _engine.prof_collect(False))
    assert ops(load(prof)) == []


def test_bulk_group_shows_its_kernels(prof):
    mx.engine.set_engine_type('ThreadedEngine')
    a = mx.nd.ones((4,))
    mx.nd.waitall()
    P.set_state('run')
    with mx.engine.bulk(8):
        b = a + 1
        c = b * 3
        d = c - a
    d.wait_to_read()
    P.set_state('stop')
    events = ops(load(prof))
    group = [e for e in events if e['name'] == 'bulk']
    assert len(group) == 1
    inner = [e for e in events if e['args'].get('bulk_seq') == group[0]['args']['seq']]
    assert [e['args']['writes'] for e in inner] == [[P.var_id(x)] for x in (b, c, d)]
    assert sorted(inner[2]['args']['reads']) == sorted([P.var_id(c), P.var_id(a)])
    g = group[0]
    for e in inner:
        assert e['tid'] == g['tid'] and g['ts'] - 1e-3 <= e['ts'] <= g['ts'] + g['dur']


def test_user_objects_appear(prof):
    P.set_state('run')
    dom = P.Domain('training')
    task = dom.new_task('epoch')
    frame = P.Frame(dom, 'batch')
    event = P.Event('load')
    task.start()
    frame.start()
    event.start()
    event.stop()
    frame.stop()
    task.stop()
    counter = P.Counter(dom, 'samples', 5)
    counter += 3
    counter -= 1
    counter.set_value(10)
    counter.increment(2)
    counter.decrement()
    P.Marker(dom, 'checkpoint').mark('thread')
    P.set_state('stop')
    counter.increment(100)          # not recorded: the profiler is stopped
    doc = load(prof)
    ev = doc['traceEvents']
    procs = {e['pid']: e['args']['name'] for e in ev
             if e['ph'] == 'M' and e['name'] == 'process_name'}

    def of(name):
        return [e for e in ev if e.get('name') == name and e['ph'] != 'M']
    assert [e['ph'] for e in of('epoch')] == ['b', 'e']
    assert procs[of('epoch')[0]['pid']] == 'training'
    assert [e['ph'] for e in of('batch')] == ['b', 'e']
    assert of('batch')[0]['cat'] == 'training,frame'
    assert [e['ph'] for e in of('load')] == ['b', 'e'] and of('load')[0]['cat'] == 'event'
    assert of('epoch')[0]['ts'] <= of('batch')[0]['ts'] <= of('load')[0]['ts']
    assert [e['args']['samples'] for e in of('samples')] == [5, 8, 7, 10, 12, 11]
    mark = of('checkpoint')
    assert len(mark) == 1 and mark[0]['ph'] == 'i' and mark[0]['s'] == 't'
    assert str(counter) == 'samples' and str(dom) == 'training' and str(task) == 'epoch'


def test_aggregate_table_and_json(prof):
    P.set_state('run')
    a = mx.nd.ones((32, 32))
    outs = [mx.nd.dot(a, a) for _ in range(3)]
    (a * 2).wait_to_read()
    mx.nd.waitall()
    P.set_state('stop')
    stats = json.loads(P.dumps(format='json'))
    gemm = stats['Time']['operator']['gemm']
    assert gemm['Count'] == len(outs)
    assert gemm['Min'] <= gemm['Avg'] <= gemm['Max'] <= gemm['Total']
    assert gemm['Avg'] == pytest.approx(gemm['Total'] / 3, rel=1e-3, abs=1e-6)
    assert stats['Unit'] == {'Time': 'ms'}
    text = P.dumps(sort_by='count', ascending=True)
    lines = text.splitlines()
    assert 'Profile Statistics:' in lines and 'operator' in lines
    start = lines.index('operator') + 4
    rows = lines[start:lines.index('', start)]
    counts = [int(r[30:41]) for r in rows]
    assert counts == sorted(counts) and any(r.startswith('gemm ') for r in rows)
    assert int(next(r for r in rows if r.startswith('gemm '))[30:41]) == 3
    # the trace agrees with the table
    assert len([e for e in ops(load(prof)) if e['name'] == 'gemm']) == 3
    P.dumps(reset=True)
    assert 'gemm' not in P.dumps()


def test_full_buffer_drops_and_counts(prof):
    mx.engine.set_engine_type('NaiveEngine')
    old = _engine.prof_set_capacity(100)
    x = mx.engine.new_var()
    try:
        result = {}

        def client():          # a thread of its own: a buffer that starts empty
            P.set_state('run')
            for _ in range(250):
                mx.engine.push_noop(writes=[x])
            P.set_state('stop')
            result['tid'] = threading.get_native_id()
        t = threading.Thread(target=client)
        t.start()
        t.join()
    finally:
        _engine.prof_set_capacity(old)
    doc = load(prof)
    mine = [e for e in ops(doc) if e['tid'] == result['tid']]
    assert len(mine) == 100 and all(e['name'] == 'noop' for e in mine)
    assert doc['otherData']['dropped_records'] == 150


def test_bad_arguments_raise_naming_them(prof):
    with pytest.raises(MXNetError, match='bogus'):
        P.set_config(bogus=1)
    with pytest.raises(MXNetError, match="profile_all.*'x'"):
        P.set_config(profile_all='x')
    with pytest.raises(MXNetError, match='dump_period'):
        P.set_config(dump_period=-1)
    with pytest.raises(MXNetError, match="state.*'go'"):
        P.set_state('go')
    with pytest.raises(MXNetError, match="profile_process.*'client'"):
        P.pause('client')
    with pytest.raises(MXNetError, match="format.*'xml'"):
        P.dumps(format='xml')
    with pytest.raises(MXNetError, match="sort_by.*'name'"):
        P.dumps(sort_by='name')
    dom = P.Domain('d')
    with pytest.raises(MXNetError, match="scope.*'galaxy'"):
        P.Marker(dom, 'm').mark('galaxy')
    with pytest.raises(TypeError, match='Task: domain must be a profiler.Domain, got str'):
        P.Task('d', 't')
    with pytest.raises(TypeError, match='name'):
        P.Counter(dom, '')
    with pytest.raises(TypeError, match='increment.*integer'):
        P.Counter(dom, 'c').increment('a')
    with pytest.raises(ValueError, match='capacity'):
        _engine.prof_set_capacity(0)


def test_set_config_resets_unnamed_keys_and_dumps_needs_aggregate(tmp_path):
    P.set_config(filename=str(tmp_path / 'a.json'), aggregate_stats=True)
    P.set_config(profile_all=True)
    assert P._config['filename'] == 'profile.json' and not P._config['aggregate_stats']
    P._agg.clear()
    with pytest.warns(UserWarning, match='aggregate_stats=True'):
        assert P.dumps() == ''
    P.set_config()
