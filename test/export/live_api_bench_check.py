#!/usr/bin/env python3
"""Checks exported Live API-Bench files against the published format (SLOT-BIRD, SEL-BIRD, REST-BIRD).

Usage: live_api_bench_check.py [--strict-identifiers] FOLDER [FOLDER ...]

Each FOLDER holds one JSON array per database, <db>.json (the published layout). Every sample is
checked for what the published runtime and its scripts read:

- SLOT / SEL records: the fields and their types; dataset_name is the file's database;
  initialization_step is an initialize_active_data object whose condition_sequence merges each
  table once, the newly joined table on the right (the published runtime merges the right-hand
  table into the tables joined so far); every "$LABEL$" a call reads is defined by an earlier call
  (or is the initialization's label); every key a call names is identifier-safe as the runtime's
  make_safe leaves column names, and in its tool's key enum when the tool has one; gold_answer is
  squeezed (a list of one value would have been that value); a negative expects no call.
- REST records: BIRD's fields, dataset_name and db_id the file's database, output the endpoint call.

make_safe keeps characters such as "%" (california_schools: "Percent (%) Eligible Free (K-12)"
is "Percent_%_Eligible_Free_K_12" to the runtime), so a key outside [A-Za-z0-9_] that make_safe
leaves unchanged is a warning; --strict-identifiers makes it a failure.

Prints a JSON summary {files, samples, ok, failures, warnings} and exits 1 on any failure.
Python 3 standard library only.
"""

import json
import re
import sys
from pathlib import Path

INITIALIZE = "initialize_active_data"
REFERENCE = re.compile(r"^\$([^$.]+)(?:\.(.+))?\$$")
IDENTIFIER = re.compile(r"^[A-Za-z0-9_]*$")
KEY_ARGUMENTS = ("key_name", "partition_by")


def make_safe(name):
    """The published runtime's make_safe (sql_query_components.py)."""
    safe = name.strip().replace(" ", "_")
    safe = safe.replace("(", "").replace(")", "")
    return safe.replace("/", "_").replace("-", "_")


class Problems:
    def __init__(self):
        self.failures = []
        self.warnings = []

    def fail(self, where, message):
        self.failures.append(dict(where, problem=message))

    def warn(self, where, message):
        # Once per file: the same key is named by many samples.
        if not any(w["file"] == where.get("file") and w["warning"] == message for w in self.warnings):
            self.warnings.append({"file": where.get("file"), "warning": message})


def is_str(value, allow_empty=False):
    return isinstance(value, str) and (allow_empty or value != "")


def is_id(value):
    return (isinstance(value, int) and not isinstance(value, bool) and value >= 0) or is_str(value)


def check_fields(sample, fields, where, problems):
    """fields: name -> (predicate, what it must be); returns False when one is missing or wrong."""
    ok = True
    for name, (predicate, what) in fields.items():
        if name not in sample:
            problems.fail(where, f"missing field {name}")
            ok = False
        elif not predicate(sample[name]):
            problems.fail(where, f"{name} must be {what}")
            ok = False
    return ok


def alias_of(qualified):
    return qualified.split(".", 1)[0]


def check_initialization(init, where, problems, label_name="initialization_step"):
    if not isinstance(init, dict) or set(init) != {"name", "arguments", "label"}:
        problems.fail(where, f"{label_name} must be {{name, arguments, label}}")
        return False
    if init["name"] != INITIALIZE or not is_str(init["label"]):
        problems.fail(where, f"{label_name} must call {INITIALIZE} with a label")
        return False
    args = init["arguments"]
    if not isinstance(args, dict) or set(args) != {"condition_sequence", "alias_to_table_dict", "database_path"}:
        problems.fail(where, f"{label_name}: arguments must be condition_sequence, alias_to_table_dict, database_path")
        return False
    aliases = args["alias_to_table_dict"]
    if not isinstance(aliases, dict) or not aliases:
        problems.fail(where, f"{label_name}: alias_to_table_dict must map aliases to tables")
        return False
    for alias, entry in aliases.items():
        if (
            not isinstance(entry, dict)
            or set(entry) != {"original_table_name", "modified_table_name"}
            or not all(is_str(v) for v in entry.values())
        ):
            problems.fail(where, f"{label_name}: alias {alias!r} must be {{original_table_name, modified_table_name}}")
            return False
    if not is_str(args["database_path"]):
        problems.fail(where, f"{label_name}: database_path must be a path")
        return False
    conditions = args["condition_sequence"]
    if not isinstance(conditions, list):
        problems.fail(where, f"{label_name}: condition_sequence must be a list")
        return False
    joined = set()
    for i, condition in enumerate(conditions):
        if not (
            isinstance(condition, list)
            and len(condition) == 3
            and all(is_str(part) for part in condition)
            and "." in condition[0]
            and "." in condition[1]
        ):
            problems.fail(where, f"{label_name}: condition {i} must be [\"alias.column\", \"alias.column\", kind]")
            return False
        left, right = alias_of(condition[0]), alias_of(condition[1])
        if left not in aliases or right not in aliases:
            problems.fail(where, f"{label_name}: condition {i} names an alias alias_to_table_dict lacks")
            return False
        if i == 0:
            joined.add(left)
        if left not in joined:
            problems.fail(where, f"{label_name}: condition {i}: left side {condition[0]} is not of a table joined before")
            return False
        if right in joined:
            problems.fail(where, f"{label_name}: condition {i}: right side {condition[1]} is not a newly joined table")
            return False
        joined.add(right)
    if len(aliases) > 1 and joined != set(aliases):
        problems.fail(where, f"{label_name}: tables {sorted(set(aliases) - joined)} are never joined")
        return False
    return True


def references(value):
    if isinstance(value, str):
        match = REFERENCE.match(value)
        return [match.group(1)] if match else []
    if isinstance(value, list):
        return [label for v in value for label in references(v)]
    if isinstance(value, dict):
        return [label for v in value.values() for label in references(v)]
    return []


def used_keys(value, field=None):
    """The keys a call's arguments name: key_name / partition_by at any depth (operands are {key_name})."""
    if isinstance(value, str):
        return [value] if field in KEY_ARGUMENTS else []
    if isinstance(value, list):
        return [key for v in value for key in used_keys(v, field)]
    if isinstance(value, dict):
        return [key for name, v in value.items() for key in used_keys(v, name)]
    return []


def key_enum(schema):
    """The enum of a key argument's schema (also under anyOf / items), or None when it has none."""
    if not isinstance(schema, dict):
        return None
    values = set()
    found = False
    if isinstance(schema.get("enum"), list):
        values.update(v for v in schema["enum"] if isinstance(v, str))
        found = True
    for part in schema.get("anyOf", []) + [schema.get("items")]:
        inner = key_enum(part)
        if inner is not None:
            values.update(inner)
            found = True
    return values if found else None


def check_key(key, enum, where, problems, strict):
    if not isinstance(key, str):
        problems.fail(where, f"key {key!r} is not a string")
        return
    if make_safe(key) != key:
        problems.fail(where, f"key {key!r} is not identifier-safe (make_safe makes it {make_safe(key)!r})")
    elif not IDENTIFIER.match(key):
        (problems.fail if strict else problems.warn)(where, f"key {key!r} holds characters outside [A-Za-z0-9_]")
    if enum is not None and key not in enum:
        problems.fail(where, f"key {key!r} is not in its tool's key enum")


def is_squeezed(answer):
    if not isinstance(answer, list):
        return True
    return len(answer) != 1 and all(not isinstance(a, list) or len(a) > 1 for a in answer)


def check_sequence_sample(sample, db, where, problems, strict):
    fields = {
        "query": (is_str, "the SQL"),
        "input": (is_str, "the question"),
        "dataset_name": (is_str, "the database"),
        "sample_id": (is_id, "an integer or a string"),
        "gold_answer": (lambda v: True, "the answer"),
        "initialization_step": (lambda v: isinstance(v, dict), "an object"),
        "output": (lambda v: isinstance(v, list), "a list of calls"),
        "tools": (lambda v: isinstance(v, list), "a list of tools"),
        "evidence": (lambda v: is_str(v, allow_empty=True), "a string"),
        "difficulty": (lambda v: v is None or isinstance(v, str), "a string or null"),
        "negative": (lambda v: isinstance(v, bool), "a boolean"),
    }
    if not check_fields(sample, fields, where, problems):
        return
    failures = len(problems.failures)
    if sample["dataset_name"] != db:
        problems.fail(where, f"dataset_name {sample['dataset_name']!r} is not the file's database {db!r}")
    if not is_squeezed(sample["gold_answer"]):
        problems.fail(where, "gold_answer is not squeezed (a list of one value stands for that value)")
    if sample["negative"]:
        if sample["output"] or not is_str(sample.get("expected_reply")):
            problems.fail(where, "a negative expects no call and an expected_reply")
    elif not sample["output"]:
        problems.fail(where, "no gold calls")

    tools = {}
    for tool in sample["tools"]:
        if not isinstance(tool, dict) or set(tool) != {"description", "name", "arguments"} or not is_str(tool.get("name")):
            problems.fail(where, "a tool must be {description, name, arguments}")
            continue
        if tool["name"] == INITIALIZE:
            problems.fail(where, f"{INITIALIZE} is not a tool a model is offered")
        tools[tool["name"]] = tool

    init = sample["initialization_step"]
    if not check_initialization(init, where, problems):
        return
    defined = {init["label"]}
    for i, call in enumerate(sample["output"]):
        at = dict(where, call=i)
        if not isinstance(call, dict) or set(call) != {"name", "arguments", "label"}:
            problems.fail(at, "a call must be {name, arguments, label}")
            continue
        if not is_str(call["name"]) or not is_str(call["label"]) or not isinstance(call["arguments"], dict):
            problems.fail(at, "a call needs a name, a label and an arguments object")
            continue
        for label in references(call["arguments"]):
            if label not in defined:
                problems.fail(at, f"reads ${label}$, which no earlier call defines")
        if call["label"] in defined:
            problems.fail(at, f"label {call['label']} is defined twice")
        defined.add(call["label"])
        if call["name"] == INITIALIZE:
            check_initialization(call, at, problems, label_name=f"call {i}")
            continue
        tool = tools.get(call["name"])
        if tool is None and not sample["negative"]:
            problems.fail(at, f"calls {call['name']}, which its tools lack")
        enum = key_enum(tool["arguments"].get("key_name")) if tool else None
        for key in used_keys(call["arguments"]):
            check_key(key, enum, at, problems, strict)
    return len(problems.failures) == failures


def check_rest_sample(sample, db, where, problems):
    fields = {
        "question_id": (is_id, "an integer or a string"),
        "sample_id": (is_id, "an integer or a string"),
        "db_id": (is_str, "the database"),
        "question": (is_str, "the question"),
        "evidence": (lambda v: is_str(v, allow_empty=True), "a string"),
        "SQL": (is_str, "the SQL"),
        "difficulty": (lambda v: v is None or isinstance(v, str), "a string or null"),
        "dataset_name": (is_str, "the database"),
        "gold_answer": (lambda v: isinstance(v, list), "the SQL's rows"),
        "output": (lambda v: isinstance(v, list), "a list of endpoint calls"),
        "output_after_executing_api": (lambda v: True, "the response"),
        "negative": (lambda v: isinstance(v, bool), "a boolean"),
    }
    if not check_fields(sample, fields, where, problems):
        return
    if sample["dataset_name"] != db or sample["db_id"] != db:
        problems.fail(where, f"dataset_name and db_id must be the file's database {db!r}")
    for call in sample["output"]:
        if not isinstance(call, dict) or set(call) != {"name", "arguments"} or not isinstance(call.get("arguments"), dict):
            problems.fail(where, "an endpoint call must be {name, arguments}")
    if sample["negative"]:
        if sample["output"] or not is_str(sample.get("expected_reply")):
            problems.fail(where, "a negative expects no call and an expected_reply")
    elif not sample["output"]:
        problems.fail(where, "no endpoint call")


def check_file(path, problems, strict):
    db = path.stem
    try:
        samples = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        problems.fail({"file": str(path)}, f"not JSON: {error}")
        return 0
    if not isinstance(samples, list):
        problems.fail({"file": str(path)}, "not a JSON array of samples")
        return 0
    for index, sample in enumerate(samples):
        where = {"file": str(path), "index": index}
        if not isinstance(sample, dict):
            problems.fail(where, "not an object")
            continue
        where["sample_id"] = sample.get("sample_id")
        if "SQL" in sample and "db_id" in sample:
            check_rest_sample(sample, db, where, problems)
        else:
            check_sequence_sample(sample, db, where, problems, strict)
    return len(samples)


def main(argv):
    strict = "--strict-identifiers" in argv
    folders = [Path(a) for a in argv if a != "--strict-identifiers"]
    if not folders:
        print(__doc__, file=sys.stderr)
        return 2
    problems = Problems()
    files = [f for folder in folders for f in sorted(folder.glob("*.json"))]
    if not files:
        problems.fail({"folders": [str(f) for f in folders]}, "no <db>.json files")
    samples = sum(check_file(f, problems, strict) for f in files)
    failed = {(f.get("file"), f.get("index")) for f in problems.failures}
    summary = {
        "files": len(files),
        "samples": samples,
        "ok": samples - len({key for key in failed if key[1] is not None}),
        "failures": problems.failures,
        "warnings": problems.warnings,
    }
    print(json.dumps(summary, indent=2))
    return 1 if problems.failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
