#!/usr/bin/python3
"""Independent re-execution of a generated dataset, with nothing of nl2api's code.

usage: python3 bench/recheck.py <source dir> <output dir>

For every sample in <output dir>/{slot,sel,rest,chain}/*.jsonl: runs its gold SQL (`query`) with
Python's own sqlite3 on the source's database (<source dir>/<db>.sqlite, or BIRD's
dev_databases/<db>/<db>.sqlite), and checks that
  - the rows equal the sample's `gold_answer` (as a multiset; in order when the SQL has an
    ORDER BY at its end), and
  - the answer the sample's own calls produced (`output_after_executing_api`: SLOT/SEL one
    list per answer column or one value, REST a list of row objects) holds the same rows.
Numbers compare within 1e-9 relative, as the verifier's tolerant rule does. Rows an ORDER BY
leaves tied may come in any order: a sample whose own verdict says so (semantic category
`ties`) is compared as a multiset and counted apart. SQL that reads the clock ('now',
CURRENT_TIMESTAMP, ...) runs at the run's reference time (manifest.json), as nl2api ran it.
A chain sample's `query` is its composed statement, run with its `query_arguments`; its hops
are replayed one by one: each endpoint's SQL (rest/endpoints/<db>.json) run with its
arguments, the next hop's argument made of the named field of those rows by the sample's
`transform` (written here again in Python), and the last hop's rows must be the
`gold_answer` too. The question must not contain the answer or a bridged value.
Prints one line per disagreement and a summary; exits 1 if any sample disagrees.
"""
import json
import math
import os
import re
import sqlite3
import sys


def database(source, db_id):
    for path in (os.path.join(source, db_id + '.sqlite'),
                 os.path.join(source, 'dev_databases', db_id, db_id + '.sqlite')):
        if os.path.exists(path):
            return path
    raise FileNotFoundError(db_id)


def same_value(a, b):
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return a == b or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return a == b


def same_rows(a, b, ordered):
    if len(a) != len(b):
        return False
    if not ordered:
        key = lambda row: json.dumps(row, sort_keys=True, default=str)
        a, b = sorted(a, key=key), sorted(b, key=key)
    return all(len(x) == len(y) and all(same_value(p, q) for p, q in zip(x, y)) for x, y in zip(a, b))


def rows_of_answer(sample, width):
    """The rows the sample's calls returned, in the gold's row shape."""
    out = sample['output_after_executing_api']
    if sample['formulation'] == 'rest' or (isinstance(out, list) and out and isinstance(out[0], dict)):
        # Row objects: a REST response, or a SLOT/SEL answer that is one table output.
        return [list(row.values()) if isinstance(row, dict) else [row] for row in (out if isinstance(out, list) else [out])]
    if len(sample['answer_labels']) == 1:
        values = out if isinstance(out, list) else [out]
        if width == 1:
            return [[v] for v in values]
        return [list(v) for v in values]  # one table output
    columns = [c if isinstance(c, list) else [c] for c in out]
    return [list(row) for row in zip(*columns)]


CLOCK_WORDS = re.compile(r"\b(CURRENT_TIMESTAMP|CURRENT_DATE|CURRENT_TIME)\b", re.I)
NOW = re.compile(r"'now'", re.I)


def pinned(sql, reference):
    """The SQL with its clock readings replaced by the reference time (a plain text rewrite)."""
    if reference is None:
        return sql
    parts = {'CURRENT_TIMESTAMP': reference, 'CURRENT_DATE': reference[:10], 'CURRENT_TIME': reference[11:]}
    sql = CLOCK_WORDS.sub(lambda m: "'%s'" % parts[m.group(1).upper()], sql)
    return NOW.sub("'%s'" % reference, sql)


def reference_time(output):
    try:
        with open(os.path.join(output, 'manifest.json')) as f:
            times = re.findall(r'"referenceTime":\s*"([^"]+)"', f.read())
        return times[0] if times else None
    except OSError:
        return None


def transformed(kind, values):
    """One value of a field's values by a chain's transform, or None (no single value)."""
    if kind == 'value':
        return values[0] if len(values) == 1 else None
    if not values or any(v is None for v in values):
        return None
    if kind in ('max', 'min'):
        if not all(isinstance(v, (int, float)) for v in values):
            return None
        return max(values) if kind == 'max' else min(values)
    if kind in ('alphabetical_first', 'alphabetical_last'):
        if not all(isinstance(v, str) and v.isascii() for v in values):
            return None
        return min(values) if kind == 'alphabetical_first' else max(values)
    if kind in ('year', 'month'):
        return values[0][:4] if kind == 'year' else values[0][5:7]
    raise ValueError('unknown transform %s' % kind)


def replay_chain(con, endpoints, sample):
    """The chain's hops run one by one with sqlite3: the last hop's rows, or why it stopped."""
    rows = []
    before = None
    for i, call in enumerate(sample['output']):
        endpoint = endpoints[call['name']]
        args = dict(call['arguments'])
        if 'binds' in call:
            ((param, ref),) = call['binds'].items()
            field = ref.strip('$').split('.', 1)[1]
            index = [f['name'] for f in before['response']['fields']].index(field)
            value = transformed(call['transform'], [r[index] for r in rows])
            if value is None or value != args[param]:
                return None, 'hop %d: %s of the rows gives %r, the sample passes %r' % (i + 1, call['transform'], value, args[param])
            args[param] = value
        rows = [list(r) for r in con.execute(endpoint['sql'], args).fetchall()]
        before = endpoint
    return rows, None


def mentions(text, value):
    return value is not None and str(value) != '' and str(value).lower() in text.lower()


def check_chains(source, output, connections):
    folder = os.path.join(output, 'chain')
    checked = disagree = 0
    if not os.path.isdir(folder):
        return checked, disagree
    for name in sorted(os.listdir(folder)):
        if not name.endswith('.jsonl'):
            continue
        db_id = name[:-len('.jsonl')]
        con = connections.setdefault(db_id, sqlite3.connect('file:' + database(source, db_id) + '?mode=ro', uri=True))
        with open(os.path.join(output, 'rest', 'endpoints', db_id + '.json')) as f:
            endpoints = {e['operationId']: e for e in json.load(f)['endpoints']}
        with open(os.path.join(folder, name)) as lines:
            for line in lines:
                sample = json.loads(line)
                checked += 1
                problems = []
                ordered = re.search(r'ORDER\s+BY[^)]*$', sample['query'], re.I | re.S) is not None
                rows = [list(r) for r in con.execute(sample['query'], sample['query_arguments']).fetchall()]
                if not same_rows(rows, sample['gold_answer'], ordered):
                    problems.append('gold_answer differs from the composed query run by sqlite3')
                replayed, why = replay_chain(con, endpoints, sample)
                if why:
                    problems.append(why)
                elif not same_rows(replayed, sample['gold_answer'], ordered):
                    problems.append('the hops replayed by sqlite3 give other rows than gold_answer')
                bridged = [c['arguments'][p] for c in sample['output'] if 'binds' in c for p in c['binds']]
                leaked = [v for v in bridged + [v for row in sample['gold_answer'] for v in row] if mentions(sample['input'], v)]
                if leaked:
                    problems.append('the question contains %r' % leaked[0])
                if problems:
                    disagree += 1
                    print('chain %s: %s' % (sample['sample_id'], '; '.join(problems)))
    return checked, disagree


def main(source, output):
    checked = disagree = tied = 0
    connections = {}
    reference = reference_time(output)
    for formulation in ('slot', 'sel', 'rest'):
        folder = os.path.join(output, formulation)
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if not name.endswith('.jsonl'):
                continue
            db_id = name[:-len('.jsonl')]
            if db_id not in connections:
                uri = 'file:' + database(source, db_id) + '?mode=ro'
                connections[db_id] = sqlite3.connect(uri, uri=True)
            con = connections[db_id]
            with open(os.path.join(folder, name)) as lines:
                for line in lines:
                    sample = json.loads(line)
                    checked += 1
                    rows = [list(r) for r in con.execute(pinned(sample['query'], reference)).fetchall()]
                    ordered = re.search(r'ORDER\s+BY[^)]*$', sample['query'], re.I | re.S) is not None
                    if ordered and sample.get('verification', {}).get('semantic', {}).get('category') == 'ties':
                        ordered = False
                        tied += 1
                    gold = sample['gold_answer']
                    problems = []
                    if not same_rows(rows, gold, ordered):
                        problems.append('gold_answer differs from sqlite3')
                    width = len(rows[0]) if rows else len(gold[0]) if gold else 1
                    try:
                        answer = rows_of_answer(sample, width)
                        if not same_rows(rows, answer, ordered):
                            problems.append('the calls\' answer differs from sqlite3')
                    except (TypeError, ValueError) as error:
                        problems.append('unreadable answer: %s' % error)
                    if problems:
                        disagree += 1
                        print('%s %s: %s' % (formulation, sample['sample_id'], '; '.join(problems)))
    chains, chains_disagree = check_chains(source, output, connections)
    print('%d samples re-executed with python3 sqlite3 %s: %d agree, %d disagree'
          ' (%d compared as multisets: their ORDER BY leaves rows tied)'
          % (checked, sqlite3.sqlite_version, checked - disagree, disagree, tied)
          + ('; %d chains: composed query and hops replayed, %d disagree' % (chains, chains_disagree) if chains else ''))
    return 1 if disagree or chains_disagree else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1], sys.argv[2]))
