"""Compare a migrated database with LiteLLM's schema.prisma.

The harness builds the schema from LiteLLM's SQL migrations (there is no
Prisma schema engine to run `prisma migrate`), so this checks the result is
what the Prisma client will expect: every model's table, every scalar
field's column, list fields as arrays and non-list fields as scalars.

    psql -AtF $'\\t' -c "<columns query>" | python check_schema.py schema.prisma

stdin: one line per column of the database's schema: table, column,
data_type (information_schema), tab-separated. Prints what is missing or
different and exits 1 if anything is.
"""

from __future__ import annotations

import re
import sys

BLOCK = re.compile(r"^(model|enum|view|type)\s+(\w+)\s*\{(.*?)^\}", re.M | re.S)
FIELD = re.compile(r"^(\w+)\s+(\w+)(?:\([^)]*\))?(\[\])?(\?)?(.*)$")


def strip_comment(line: str) -> str:
    in_string = False
    i = 0
    while i < len(line):
        c = line[i]
        if c == "\\" and in_string:
            i += 1
        elif c == '"':
            in_string = not in_string
        elif not in_string and line.startswith("//", i):
            return line[:i]
        i += 1
    return line


def expected_columns(schema: str) -> dict[str, dict[str, bool]]:
    """table -> {column: is_list} for every model of the schema."""
    blocks = [(kind, name, body) for kind, name, body in BLOCK.findall(schema)]
    models = {name for kind, name, _ in blocks if kind in ("model", "view")}
    tables: dict[str, dict[str, bool]] = {}
    for kind, name, body in blocks:
        if kind != "model":
            continue
        table = name
        columns: dict[str, bool] = {}
        for raw in body.splitlines():
            line = strip_comment(raw).strip()
            mapped = re.match(r'@@map\(\s*"([^"]+)"\s*\)', line)
            if mapped:
                table = mapped.group(1)
                continue
            m = FIELD.match(line)
            if not m or line.startswith("@@"):
                continue
            field, ftype, is_list, _optional, attributes = m.groups()
            if ftype in models or "@ignore" in attributes:
                continue  # a relation field has no column of its own
            column = re.search(r'@map\(\s*"([^"]+)"\s*\)', attributes)
            columns[column.group(1) if column else field] = bool(is_list)
        tables[table] = columns
    return tables


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        want = expected_columns(f.read())
    have: dict[str, dict[str, str]] = {}
    for line in sys.stdin.read().splitlines():
        if line.strip():
            table, column, data_type = line.split("\t")[:3]
            have.setdefault(table, {})[column] = data_type
    problems = []
    for table, columns in sorted(want.items()):
        if table not in have:
            problems.append(f"missing table {table}")
            continue
        for column, is_list in sorted(columns.items()):
            data_type = have[table].get(column)
            if data_type is None:
                problems.append(f"missing column {table}.{column}")
            elif is_list != (data_type == "ARRAY"):
                expected = "an array" if is_list else "a scalar"
                problems.append(f"{table}.{column} is {data_type}, expected {expected}")
    for p in problems:
        print(p)
    count = sum(len(c) for c in want.values())
    print(f"schema check: {len(want)} tables, {count} columns, {len(problems)} problems", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
