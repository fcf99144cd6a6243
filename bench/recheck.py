#!/usr/bin/python3
"""Independent re-execution of a generated dataset, with nothing of nl2api's code.

usage: python3 bench/recheck.py <source dir> <output dir>

For every sample in <output dir>/{slot,sel,rest}/*.jsonl: runs its gold SQL (`query`) with
Python's own sqlite3 on the source's database (<source dir>/<db>.sqlite, or BIRD's
dev_databases/<db>/<db>.sqlite), and checks that
  - the rows equal the sample's `gold_answer` (as a multiset; in order when the SQL has an
    ORDER BY at its end), and
  - the answer the sample's own calls produced (`output_after_executing_api`: SLOT/SEL one
    list per answer column or one value, REST a list of row objects) holds the same rows.
Numbers compare within 1e-9 relative, as the verifier's tolerant rule does.
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


def main(source, output):
    checked = disagree = 0
    connections = {}
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
                    rows = [list(r) for r in con.execute(sample['query']).fetchall()]
                    ordered = re.search(r'ORDER\s+BY[^)]*$', sample['query'], re.I | re.S) is not None
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
    print('%d samples re-executed with python3 sqlite3 %s: %d agree, %d disagree'
          % (checked, sqlite3.sqlite_version, checked - disagree, disagree))
    return 1 if disagree else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1], sys.argv[2]))
