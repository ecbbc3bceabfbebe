"""What ``mx.profiler`` writes: the Chrome trace (``dump``) and the aggregate table (``dumps``).

Engine records come from ``_engine.prof_collect`` as tuples (see there); they are turned
into trace events here, at dump time only. Times in the trace are microseconds of
CLOCK_MONOTONIC (``ts``/``dur``, fractions keep the nanoseconds); aggregates are in ms.
"""
import json
import os
import threading

# record kinds (the REC_* codes of _engine_prof.pxi)
REC_OP, REC_PART, REC_BULK = 0, 1, 2
REC_DEPS = 8
ENGINE_PID = 0                      # MXNet puts the operators of cpu(0) in pid 0 too
SORT_KEYS = ('total', 'avg', 'min', 'max', 'count')
FORMATS = ('table', 'json')


def thread_label(tid, worker):
    """'engine worker i' for a worker; a client thread by its Python name when alive."""
    if worker:
        return f'engine worker {worker - 1}'
    for t in threading.enumerate():
        if t.native_id == tid:
            return f'client thread {t.name}'
    if tid == os.getpid():
        return 'client thread MainThread'
    return f'client thread {tid}'


def op_events(tid, records):
    """Chrome events of one thread's engine records."""
    out = []
    for (kind, name, t_push, t0, t1, seq, part, nparts, reads, writes, ndeps,
         skipped) in records:
        ev = {'name': name, 'ph': 'X', 'ts': t0 / 1000.0, 'dur': (t1 - t0) / 1000.0,
              'pid': ENGINE_PID, 'tid': tid}
        if kind == REC_PART:
            ev['cat'] = 'kernel_part'
            ev['args'] = {'seq': seq, 'part': part, 'nparts': nparts}
        else:
            ev['cat'] = 'operator'
            args = {'seq': seq, 'reads': reads, 'writes': writes,
                    'wait_us': (t0 - t_push) / 1000.0, 'push_ts': t_push / 1000.0}
            if kind == REC_BULK:
                args['bulk_seq'] = args.pop('seq')
            if ndeps > REC_DEPS:
                args['vars_total'] = ndeps      # reads/writes list the first REC_DEPS
            if skipped:
                args['skipped'] = True          # an input carried an error: not run
            ev['args'] = args
        out.append(ev)
    return out


def trace_json(threads, engine_events, user_events, categories, dropped):
    """The whole trace file as a string. `threads`: {tid: label}; `categories`: {pid:
    name} of the user objects' tracks."""
    meta = [{'ph': 'M', 'name': 'process_name', 'pid': ENGINE_PID,
             'args': {'name': 'cpu/0 (mxcy engine)'}}]
    order = sorted(threads.items(), key=lambda kv: (not kv[1].startswith('engine'), kv[1]))
    for i, (tid, label) in enumerate(order):
        meta.append({'ph': 'M', 'name': 'thread_name', 'pid': ENGINE_PID, 'tid': tid,
                     'args': {'name': label}})
        meta.append({'ph': 'M', 'name': 'thread_sort_index', 'pid': ENGINE_PID,
                     'tid': tid, 'args': {'sort_index': i}})
    for pid, cat in sorted(categories.items()):
        meta.append({'ph': 'M', 'name': 'process_name', 'pid': pid, 'args': {'name': cat}})
    events = sorted(engine_events + user_events, key=lambda e: e['ts'])
    doc = {'traceEvents': meta + events, 'displayTimeUnit': 'ms',
           'otherData': {'producer': 'mxcy', 'clock': 'CLOCK_MONOTONIC',
                         'dropped_records': dropped}}
    return json.dumps(doc, indent=1)


def aggregate_add(agg, cat, name, dur_ns):
    st = agg.get((cat, name))
    if st is None:
        agg[(cat, name)] = [1, dur_ns, dur_ns, dur_ns]
    else:
        st[0] += 1
        st[1] += dur_ns
        st[2] = min(st[2], dur_ns)
        st[3] = max(st[3], dur_ns)


def _rows(agg, sort_by, ascending):
    """{category: [(name, count, total, min, max, avg) in ms]} sorted as asked."""
    cats = {}
    for (cat, name), (n, total, lo, hi) in agg.items():
        cats.setdefault(cat, []).append(
            (name, n, total / 1e6, lo / 1e6, hi / 1e6, total / 1e6 / n))
    col = {'count': 1, 'total': 2, 'min': 3, 'max': 4, 'avg': 5}[sort_by]
    for rows in cats.values():
        rows.sort(key=lambda r: (r[col], r[0]), reverse=not ascending)
    return dict(sorted(cats.items()))


def table(agg, sort_by, ascending):
    lines = ['', 'Profile Statistics:',
             '\tNote the difference in units for different entries.']
    for cat, rows in _rows(agg, sort_by, ascending).items():
        lines += [cat, '=================',
                  f"{'Name':<30}{'Total Count':>11}{'Time (ms)':>17}{'Min Time (ms)':>17}"
                  f"{'Max Time (ms)':>17}{'Avg Time (ms)':>17}",
                  f"{'----':<30}{'-' * 11:>11}{'-' * 9:>17}{'-' * 13:>17}{'-' * 13:>17}"
                  f"{'-' * 13:>17}"]
        for name, n, total, lo, hi, avg in rows:
            lines.append(f'{name:<30}{n:>11}{total:>17.4f}{lo:>17.4f}{hi:>17.4f}'
                         f'{avg:>17.4f}')
        lines.append('')
    return '\n'.join(lines) + '\n'


def table_json(agg, sort_by, ascending):
    time = {}
    for cat, rows in _rows(agg, sort_by, ascending).items():
        time[cat] = {name: {'Count': n, 'Total': round(total, 6), 'Min': round(lo, 6),
                            'Max': round(hi, 6), 'Avg': round(avg, 6)}
                     for name, n, total, lo, hi, avg in rows}
    return json.dumps({'Time': time, 'Unit': {'Time': 'ms'}}, indent=4)
