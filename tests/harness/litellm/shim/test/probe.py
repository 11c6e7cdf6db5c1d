"""prisma-client-py 0.11 -> query-engine shim -> PostgreSQL, end to end.

The query shapes LiteLLM relies on, run through the generated client of the
harness (no LiteLLM proxy involved). Against a running harness:

    DATABASE_URL=$LITELLM_DATABASE_URL tests/harness/litellm/image.sh python \\
        tests/harness/litellm/shim/test/probe.py

The shim is started from the repository's shim/src, so edits there are
tested without restarting anything. Rows it makes carry the prefix "probe-"
and are removed at the start and at the end.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import sys

from prisma import Prisma, errors

failures: list[str] = []


def check(what: str, ok: bool, detail: object = "") -> None:
    print(("ok    " if ok else "FAIL  ") + what + ("" if ok else f"   got: {detail!r}"))
    if not ok:
        failures.append(what)


async def expect_error(what: str, error: type[Exception], make) -> None:
    try:
        await make()
    except error:
        check(what, True)
    except Exception as e:  # noqa: BLE001 - reported as a failure
        check(what, False, f"{type(e).__name__}: {e}")
    else:
        check(what, False, "no error")


async def cleanup(db: Prisma) -> None:
    await db.litellm_verificationtoken.delete_many(where={"token": {"startswith": "probe-"}})
    await db.litellm_teamtable.delete_many(where={"team_id": {"startswith": "probe-"}})
    await db.litellm_budgettable.delete_many(where={"budget_id": {"startswith": "probe-"}})


async def crud(db: Prisma) -> None:
    teams = db.litellm_teamtable
    awkward = {
        "quotes": 'say "hi" \\ back\\slash \\n not-a-newline',
        "controls": "new\nline\ttab\r\x1f",
        "unicode": "é ✓ 😀 \u2028 \ud7ff",
        "looks_like_a_tag": {"$type": "Json", "value": "user data, not a tag"},
        "numbers": [0, -1, 2.5, 1e-7, 2**53 - 1],
        "nested": {"a": [None, True, False, {"b": []}]},
        "sql": "'; DROP TABLE x; --",
    }
    created = await teams.create(data={
        "team_id": "probe-1", "team_alias": "probe", "models": ["gpt-4", "b c"],
        "metadata": json.dumps(awkward), "tpm_limit": 2**40, "max_budget": 1.25,
        "budget_reset_at": dt.datetime(2030, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc),
    })
    check("create returns scalars, lists and BigInt", (created.team_id, created.models, created.tpm_limit)
          == ("probe-1", ["gpt-4", "b c"], 2**40), created)
    check("create returns DateTime", created.budget_reset_at == dt.datetime(2030, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc),
          created.budget_reset_at)
    found = await teams.find_unique(where={"team_id": "probe-1"})
    check("Json round-trips awkward content unchanged", found is not None and found.metadata == awkward,
          found and found.metadata)

    updated = await teams.update(where={"team_id": "probe-1"}, data={
        "team_alias": "probe-2", "metadata": json.dumps({"k": 1}), "models": {"set": ["x"]},
        "spend": {"increment": 0.5}, "budget_limits": None,
    })
    check("update: set, increment, Json, Json to null", updated is not None
          and (updated.team_alias, updated.metadata, updated.models, updated.spend, updated.budget_limits)
          == ("probe-2", {"k": 1}, ["x"], 0.5, None), updated)
    check("update of a missing row gives None", await teams.update(where={"team_id": "probe-none"}, data={"team_alias": "x"}) is None)
    check("delete of a missing row gives None", await teams.delete(where={"team_id": "probe-none"}) is None)

    await expect_error("duplicate id raises UniqueViolationError", errors.UniqueViolationError,
                       lambda: teams.create(data={"team_id": "probe-1"}))
    await expect_error("unknown foreign key raises ForeignKeyViolationError", errors.ForeignKeyViolationError,
                       lambda: db.litellm_verificationtoken.create(data={"token": "probe-tok-x", "budget_id": "probe-missing"}))
    await expect_error("find_unique_or_raise of a missing row raises RecordNotFoundError", errors.RecordNotFoundError,
                       lambda: teams.find_unique_or_raise(where={"team_id": "probe-none"}))
    await expect_error("find_first_or_raise of a missing row raises RecordNotFoundError", errors.RecordNotFoundError,
                       lambda: teams.find_first_or_raise(where={"team_id": "probe-none"}))
    got = await teams.find_first_or_raise(where={"team_id": {"startswith": "probe-1"}})
    check("find_first_or_raise finds a row", got.team_id == "probe-1", got)


async def filters(db: Prisma) -> None:
    teams = db.litellm_teamtable
    n = await teams.create_many(data=[{
        "team_id": f"probe-m{i}", "team_alias": f"Group-{i % 2}", "max_budget": float(i),
        "metadata": json.dumps({"i": i, "s": "a needle" if i == 2 else "hay", "tags": ["a", "b"] if i == 3 else ["a"]}),
        "created_at": dt.datetime(2020, 1, 1 + i, tzinfo=dt.timezone.utc),
    } for i in range(6)])
    check("create_many", n == 6, n)
    check("create_many skip_duplicates", await teams.create_many(data=[{"team_id": "probe-m0"}], skip_duplicates=True) == 0)

    def ids(rows):
        return [r.team_id for r in rows]

    rows = await teams.find_many(where={"team_id": {"startswith": "probe-m"},
                                        "team_alias": {"equals": "group-1", "mode": "insensitive"}},
                                 order={"max_budget": "desc"}, take=2, skip=1)
    check("find_many: insensitive equals, order, take, skip", ids(rows) == ["probe-m3", "probe-m1"], ids(rows))
    rows = await teams.find_many(where={"metadata": {"equals": json.dumps({"i": 4, "s": "hay", "tags": ["a"]})}})
    check("Json equals", ids(rows) == ["probe-m4"], ids(rows))
    rows = await teams.find_many(where={"metadata": {"path": ["i"], "equals": json.dumps(5)}})
    check("Json path + equals", ids(rows) == ["probe-m5"], ids(rows))
    rows = await teams.find_many(where={"metadata": {"path": ["s"], "string_contains": "needle"}})
    check("Json path + string_contains", ids(rows) == ["probe-m2"], ids(rows))
    rows = await teams.find_many(where={"metadata": {"path": ["tags"], "array_contains": json.dumps(["b"])}})
    check("Json path + array_contains", ids(rows) == ["probe-m3"], ids(rows))
    rows = await teams.find_many(where={"team_id": {"startswith": "probe-m"},
                                        "NOT": [{"metadata": {"path": ["s"], "equals": json.dumps("hay")}}]})
    check("Json filter inside NOT", ids(rows) == ["probe-m2"], ids(rows))
    rows = await teams.find_many(where={"team_id": {"startswith": "probe-m"},
                                        "created_at": {"gt": dt.datetime(2020, 1, 4, tzinfo=dt.timezone.utc)}},
                                 order={"team_id": "asc"})
    check("DateTime filter", ids(rows) == ["probe-m4", "probe-m5"], ids(rows))
    rows = await teams.find_many(where={"team_id": {"in": ["probe-m1", "probe-m2"]}}, order={"team_id": "asc"})
    check("in filter", ids(rows) == ["probe-m1", "probe-m2"], ids(rows))

    check("count", await teams.count(where={"team_id": {"startswith": "probe-m"}}) == 6)
    groups = await teams.group_by(by=["team_alias"], where={"team_id": {"startswith": "probe-m"}},
                                  count=True, sum={"max_budget": True}, order={"team_alias": "asc"})
    check("group_by with count and sum",
          [(g["team_alias"], g["_count"]["_all"], g["_sum"]["max_budget"]) for g in groups]
          == [("Group-0", 3, 6.0), ("Group-1", 3, 9.0)], groups)
    check("update_many", await teams.update_many(where={"team_id": {"startswith": "probe-m"}},
                                                  data={"blocked": True, "metadata": json.dumps({})}) == 6)
    check("delete_many", await teams.delete_many(where={"team_id": {"in": ["probe-m4", "probe-m5"]}}) == 2)


async def relations(db: Prisma) -> None:
    budget = await db.litellm_budgettable.create(data={
        "budget_id": "probe-b1", "max_budget": 3.0, "created_by": "probe", "updated_by": "probe",
        "model_max_budget": json.dumps({"gpt-4": 1}),
    })
    key = await db.litellm_verificationtoken.create(
        data={"token": "probe-tok", "metadata": json.dumps({"owner": "probe"}),
              "litellm_budget_table": {"connect": {"budget_id": budget.budget_id}}},
        include={"litellm_budget_table": True},
    )
    check("nested connect + include", key.litellm_budget_table is not None
          and key.litellm_budget_table.model_max_budget == {"gpt-4": 1}, key)
    got = await db.litellm_budgettable.find_unique(
        where={"budget_id": "probe-b1"},
        include={"keys": {"where": {"metadata": {"path": ["owner"], "equals": json.dumps("probe")}}}},
    )
    check("include with a Json filter", got is not None and [k.token for k in got.keys or []] == ["probe-tok"], got)
    rows = await db.litellm_budgettable.find_many(where={"keys": {"some": {"metadata": {"equals": json.dumps({"owner": "probe"})}}}})
    check("relation filter `some` with a Json filter", [b.budget_id for b in rows] == ["probe-b1"], rows)
    made = await db.litellm_budgettable.create(data={
        "budget_id": "probe-b2", "created_by": "probe", "updated_by": "probe",
        "keys": {"create": [{"token": "probe-tok-2", "metadata": json.dumps({"nested": True})}]},
    }, include={"keys": True})
    check("nested create with Json", [k.metadata for k in made.keys or []] == [{"nested": True}], made)


async def transactions(db: Prisma) -> None:
    teams = db.litellm_teamtable
    async with db.tx() as tx:
        await tx.litellm_teamtable.update(where={"team_id": "probe-1"}, data={"team_alias": "in-tx"})
    check("transaction commit", (await teams.find_unique(where={"team_id": "probe-1"})).team_alias == "in-tx")
    try:
        async with db.tx() as tx:
            await tx.litellm_teamtable.update(where={"team_id": "probe-1"}, data={"team_alias": "rolled-back"})
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    check("transaction rollback", (await teams.find_unique(where={"team_id": "probe-1"})).team_alias == "in-tx")

    async def expired() -> None:
        async with db.tx(timeout=dt.timedelta(milliseconds=300)) as tx:
            await asyncio.sleep(0.8)
            await tx.litellm_teamtable.update(where={"team_id": "probe-1"}, data={"team_alias": "late"})

    await expect_error("a transaction past its timeout raises TransactionExpiredError", errors.TransactionError, expired)

    async with db.batch_() as batch:
        batch.litellm_teamtable.update(where={"team_id": "probe-m0"}, data={"team_alias": "batched"})
        batch.litellm_teamtable.delete(where={"team_id": "probe-m1"})
    check("batch", (await teams.find_unique(where={"team_id": "probe-m0"})).team_alias == "batched"
          and await teams.find_unique(where={"team_id": "probe-m1"}) is None)


async def raw(db: Prisma) -> None:
    rows = await db.query_raw(
        "SELECT 1::int AS i, 9007199254740993::bigint AS big, 1.5::numeric AS num, 2.5::float8 AS f, true AS b, "
        "'x'::text AS t, NULL::text AS nul, '{\"a\": [1, null]}'::jsonb AS j, ARRAY['p', 'q'] AS arr, "
        "'2024-01-02 03:04:05+00'::timestamptz AS ts, 'pg_class'::regclass AS rc, 'abc'::name AS nm, "
        "ARRAY['a b'::name, 'c'::name] AS nms, '1 day 02:00:00'::interval AS iv, "
        "ARRAY['2024-01-01 00:00:00+00'::timestamptz] AS tss, 'c'::\"char\" AS ch, $1::text AS param, $2::int AS n",
        "p1", 7,
    )
    row = rows[0]
    check("query_raw: scalars and parameters",
          (row["i"], row["big"], row["num"], row["f"], row["b"], row["t"], row["nul"], row["param"], row["n"])
          == (1, 9007199254740993, 1.5, 2.5, True, "x", None, "p1", 7), row)
    check("query_raw: json, arrays, timestamps", row["j"] == {"a": [1, None]} and row["arr"] == ["p", "q"]
          and str(row["ts"]).startswith("2024-01-02"), row)
    check("query_raw: name, name[], regclass, interval, \"char\", timestamptz[] as text",
          (row["rc"], row["nm"], row["nms"], row["iv"], row["ch"]) == ("pg_class", "abc", ["a b", "c"], "1 day 02:00:00", "c")
          and len(row["tss"]) == 1 and str(row["tss"][0]).startswith("2024-01-01"), row)
    views = await db.query_raw("SELECT viewname FROM pg_views WHERE schemaname = 'pg_catalog' ORDER BY viewname LIMIT 2")
    check("pg_views.viewname (LiteLLM's start-up query)", len(views) == 2 and all(isinstance(v["viewname"], str) for v in views), views)
    first = await db.query_first('SELECT team_id FROM "LiteLLM_TeamTable" WHERE team_id = $1', "probe-1")
    check("query_first", first == {"team_id": "probe-1"}, first)
    check("execute_raw", await db.execute_raw('UPDATE "LiteLLM_TeamTable" SET spend = spend + 1 WHERE team_id = $1', "probe-1") == 1)


async def load(db: Prisma) -> None:
    teams = db.litellm_teamtable
    got = await asyncio.gather(*[teams.find_unique(where={"team_id": "probe-1"}) for _ in range(60)])
    check("60 concurrent queries", all(t is not None and t.team_id == "probe-1" for t in got))
    big = {"blob": "x" * 2_000_000, "n": list(range(1000))}
    await teams.update(where={"team_id": "probe-1"}, data={"metadata": json.dumps(big)})
    check("2 MB Json value", (await teams.find_unique(where={"team_id": "probe-1"})).metadata == big)


async def main() -> int:
    db = Prisma()
    await db.connect()
    try:
        await cleanup(db)
        for part in (crud, filters, relations, transactions, raw, load):
            print(f"# {part.__name__}")
            try:
                await part(db)
            except Exception as e:  # noqa: BLE001 - one broken part must not hide the others
                check(f"{part.__name__} ran through", False, f"{type(e).__name__}: {e}")
        await cleanup(db)
    finally:
        await db.disconnect()
    print(f"# {len(failures)} failed" + (": " + "; ".join(failures) if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
