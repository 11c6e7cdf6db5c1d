"""End-to-end check of a running harness through LiteLLM's admin API.

Run by smoke.sh, which passes the proxy URL, the master key and the database
URL in the environment (SMOKE_URL, SMOKE_KEY, SMOKE_DB). Standard library
only; rows in PostgreSQL are read with `psql`.

Every entity gets an id ending in a per-run suffix, so runs never collide;
whatever a failed run leaves behind is deleted on the way out.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request

URL = os.environ["SMOKE_URL"].rstrip("/")
KEY = os.environ["SMOKE_KEY"]
DB = os.environ.get("SMOKE_DB", "")
RUN = f"{int(time.time() * 1000) % 100_000_000:08d}"

TEAM = f"smoke-team-{RUN}"
KEY_ALIAS = f"smoke-key-{RUN}"
BUDGET = f"smoke-budget-{RUN}"
MODEL_ID = f"smoke-model-id-{RUN}"
MODEL_NAME = f"smoke-model-{RUN}"

# Metadata that has to survive every layer unchanged: JSON in HTTP, Python,
# prisma-client-py's GraphQL text, the shim's JSON protocol, jsonb and back.
AWKWARD = {
    "note": 'quote " backslash \\ slash / newline\nreturn\rtab\t',
    "not_escapes": "\\n \\t \\u00e9 \\\\ $1 %s {{x}}",
    "unicode": "é ñ ß ✓ 中文 😀 \u2028\u2029",
    "sql": "'; DROP TABLE \"LiteLLM_TeamTable\"; --",
    "graphql": 'a: {b: [1, "c"]} ) { d }',
    "json_tag_lookalike": {"$type": "Json", "value": "{\"x\": 1}"},
    "nested": {"list": [1, 2.5, -3, None, True, False, "", {}], "empty": {}},
}


class Smoke:
    def __init__(self) -> None:
        self.checks = 0
        self.failures: list[str] = []
        self.status = 0
        self.body: object = None
        self.text = ""

    # ---- plumbing -------------------------------------------------------------------
    def call(self, method: str, path: str, body: object = None, bearer: str | None = None) -> object:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(URL + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {bearer or KEY}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                self.status, raw = resp.status, resp.read()
        except urllib.error.HTTPError as e:
            self.status, raw = e.code, e.read()
        except OSError as e:
            self.status, raw = 0, str(e).encode()
        self.text = raw.decode("utf-8", "replace")
        try:
            self.body = json.loads(self.text)
        except ValueError:
            self.body = None
        return self.body

    def check(self, what: str, expected: object, actual: object) -> bool:
        self.checks += 1
        ok = expected == actual
        shown = json.dumps(actual, ensure_ascii=False)
        if ok:
            print(f"ok    {what:<64} {shown[:70]}")
        else:
            self.failures.append(what)
            print(f"FAIL  {what:<64} expected {json.dumps(expected, ensure_ascii=False)[:300]}, got {shown[:300]}")
            print(f"      last answer: HTTP {self.status} {self.text[:600]}")
        return ok

    def status_is(self, what: str, expected: int) -> bool:
        return self.check(f"{what} -> HTTP {expected}", expected, self.status)

    def field(self, *path: object) -> object:
        value = self.body
        for p in path:
            try:
                value = value[p]  # type: ignore[index]
            except (KeyError, IndexError, TypeError):
                return "<missing>"
        return value

    def sql(self, query: str, **params: str) -> str:
        """One value from PostgreSQL; params become psql variables (:'name')."""
        args = ["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", DB]
        for name, value in params.items():
            args += ["-v", f"{name}={value}"]
        out = subprocess.run(args, input=query, capture_output=True, text=True, timeout=60)
        return out.stdout.strip() if out.returncode == 0 else f"<psql failed: {out.stderr.strip()}>"

    def db_check(self, what: str, expected: str, query: str, **params: str) -> None:
        if DB:
            self.check(f"db: {what}", expected, self.sql(query, **params))

    # ---- the checks ---------------------------------------------------------------
    def health(self) -> None:
        self.call("GET", "/health/readiness")
        self.status_is("GET /health/readiness", 200)
        self.check("readiness reports the database connected", "connected", self.field("db"))
        self.call("GET", f"/team/info?team_id={TEAM}", bearer="sk-not-a-key-of-this-proxy")
        self.status_is("an unknown bearer token is refused", 401)

    def team(self) -> None:
        self.call("POST", "/team/new", {"team_id": TEAM, "team_alias": "smoke team", "max_budget": 10.5,
                                        "tpm_limit": 1000, "models": ["gpt-4o", "a b"], "metadata": AWKWARD})
        self.status_is("POST /team/new", 200)
        self.check("team/new team_id", TEAM, self.field("team_id"))
        self.call("POST", "/team/new", {"team_id": TEAM, "team_alias": "again"})
        self.check("POST /team/new with a taken team_id is refused (4xx)", 4, self.status // 100)

        self.call("GET", f"/team/info?team_id={TEAM}")
        self.status_is("GET /team/info", 200)
        self.check("team/info team_alias", "smoke team", self.field("team_info", "team_alias"))
        self.check("team/info max_budget", 10.5, self.field("team_info", "max_budget"))
        self.check("team/info tpm_limit", 1000, self.field("team_info", "tpm_limit"))
        self.check("team/info models", ["gpt-4o", "a b"], self.field("team_info", "models"))
        for name, value in AWKWARD.items():
            self.check(f"team/info metadata.{name} round-trips", value, self.field("team_info", "metadata", name))
        self.db_check("team row", "smoke team|10.5|1000",
                      "SELECT team_alias || '|' || max_budget || '|' || tpm_limit FROM \"LiteLLM_TeamTable\" WHERE team_id = :'id'",
                      id=TEAM)
        for name, value in AWKWARD.items():
            self.db_check(f"team metadata.{name} stored as sent", "t",
                          "SELECT metadata -> :'name' = :'value'::jsonb FROM \"LiteLLM_TeamTable\" WHERE team_id = :'id'",
                          id=TEAM, name=name, value=json.dumps(value))

        self.call("POST", "/team/update", {"team_id": TEAM, "team_alias": "smoke team renamed", "max_budget": 20})
        self.status_is("POST /team/update", 200)
        self.call("GET", f"/team/info?team_id={TEAM}")
        self.check("team/info team_alias after update", "smoke team renamed", self.field("team_info", "team_alias"))
        self.check("team/info max_budget after update", 20.0, self.field("team_info", "max_budget"))
        self.check("team/info metadata kept by the update", AWKWARD["note"], self.field("team_info", "metadata", "note"))
        self.db_check("team row after update", "smoke team renamed|20",
                      "SELECT team_alias || '|' || max_budget FROM \"LiteLLM_TeamTable\" WHERE team_id = :'id'", id=TEAM)

    def key(self) -> str | None:
        self.call("POST", "/key/generate", {"team_id": TEAM, "key_alias": KEY_ALIAS, "max_budget": 5,
                                            "metadata": {"owner": "smoke", "awkward": AWKWARD["note"]}})
        self.status_is("POST /key/generate", 200)
        key = self.field("key")
        if not isinstance(key, str) or not key.startswith("sk-"):
            self.check("key/generate returns an sk- key", "sk-...", key)
            return None
        self.check("key/generate key_alias", KEY_ALIAS, self.field("key_alias"))
        self.check("key/generate team_id", TEAM, self.field("team_id"))

        self.call("GET", f"/key/info?key={key}")
        self.status_is("GET /key/info", 200)
        self.check("key/info key_alias", KEY_ALIAS, self.field("info", "key_alias"))
        self.check("key/info team_id", TEAM, self.field("info", "team_id"))
        self.check("key/info metadata.awkward round-trips", AWKWARD["note"], self.field("info", "metadata", "awkward"))
        self.call("GET", f"/key/list?key_alias={KEY_ALIAS}")
        self.status_is("GET /key/list?key_alias=", 200)
        self.check("key/list finds exactly this key", 1, len(self.field("keys") or []))

        self.call("POST", "/key/update", {"key": key, "max_budget": 6, "metadata": {"owner": "smoke-updated"}})
        self.status_is("POST /key/update", 200)
        self.call("GET", f"/key/info?key={key}")
        self.check("key/info max_budget after update", 6.0, self.field("info", "max_budget"))
        self.check("key/info metadata after update", "smoke-updated", self.field("info", "metadata", "owner"))
        self.call("GET", "/key/info", bearer=key)
        self.status_is("GET /key/info authenticated with the new key itself", 200)
        self.check("the key sees its own alias", KEY_ALIAS, self.field("info", "key_alias"))
        self.db_check("key row, its token the key's SHA-256", f"{TEAM}|6|1",
                      "SELECT team_id || '|' || max_budget || '|' || (token = encode(sha256(convert_to(:'key', 'UTF8')), 'hex'))::int"
                      " FROM \"LiteLLM_VerificationToken\" WHERE key_alias = :'alias'",
                      alias=KEY_ALIAS, key=key)
        return key

    def budget(self) -> None:
        self.call("POST", "/budget/new", {"budget_id": BUDGET, "max_budget": 7.5, "budget_duration": "30d", "rpm_limit": 60})
        self.status_is("POST /budget/new", 200)
        self.check("budget/new budget_id", BUDGET, self.field("budget_id"))
        self.call("POST", "/budget/info", {"budgets": [BUDGET]})
        self.status_is("POST /budget/info", 200)
        self.check("budget/info max_budget", 7.5, self.field(0, "max_budget"))
        self.check("budget/info rpm_limit", 60, self.field(0, "rpm_limit"))
        self.call("POST", "/budget/update", {"budget_id": BUDGET, "max_budget": 8.5})
        self.status_is("POST /budget/update", 200)
        self.call("POST", "/budget/info", {"budgets": [BUDGET]})
        self.check("budget/info max_budget after update", 8.5, self.field(0, "max_budget"))
        self.db_check("budget row", "8.5|60|30d",
                      "SELECT max_budget || '|' || rpm_limit || '|' || budget_duration FROM \"LiteLLM_BudgetTable\" WHERE budget_id = :'id'",
                      id=BUDGET)

    def model(self) -> None:
        # api_base is a closed loopback port: nothing is ever sent upstream.
        params = {"model": "openai/smoke-fake", "api_base": "http://127.0.0.1:9/v1", "api_key": "sk-fake", "rpm": 10}
        self.call("POST", "/model/new", {"model_name": MODEL_NAME, "litellm_params": params, "model_info": {"id": MODEL_ID}})
        self.status_is("POST /model/new", 200)
        self.call("GET", f"/v2/model/info?modelId={MODEL_ID}")
        self.status_is("GET /v2/model/info?modelId=", 200)
        self.check("v2/model/info finds the model", 1, len(self.field("data") or []))
        self.check("v2/model/info model_name", MODEL_NAME, self.field("data", 0, "model_name"))
        self.check("v2/model/info rpm", 10, self.field("data", 0, "litellm_params", "rpm"))
        self.db_check("model row", MODEL_NAME,
                      "SELECT model_name FROM \"LiteLLM_ProxyModelTable\" WHERE model_id = :'id'", id=MODEL_ID)

        self.call("PATCH", f"/model/{MODEL_ID}/update",
                  {"model_name": MODEL_NAME, "litellm_params": {**params, "rpm": 20}, "model_info": {"id": MODEL_ID}})
        self.status_is("PATCH /model/{id}/update", 200)
        self.call("GET", f"/v2/model/info?modelId={MODEL_ID}")
        self.check("v2/model/info rpm after update", 20, self.field("data", 0, "litellm_params", "rpm"))
        self.db_check("model row after update", "20",
                      "SELECT litellm_params ->> 'rpm' FROM \"LiteLLM_ProxyModelTable\" WHERE model_id = :'id'", id=MODEL_ID)

    def delete_all(self, key: str | None) -> None:
        self.call("POST", "/model/delete", {"id": MODEL_ID})
        self.status_is("POST /model/delete", 200)
        self.call("GET", f"/v2/model/info?modelId={MODEL_ID}")
        self.check("the deleted model is not listed", 0, len(self.field("data") or []))
        self.db_check("model row gone", "0", "SELECT count(*) FROM \"LiteLLM_ProxyModelTable\" WHERE model_id = :'id'", id=MODEL_ID)

        if key:
            self.call("POST", "/key/delete", {"keys": [key]})
            self.status_is("POST /key/delete", 200)
            # LiteLLM 1.108 archives deleted keys and still answers /key/info for them.
            self.call("GET", f"/key/info?key={key}")
            self.check("the deleted key is reported deleted", "deleted", self.field("info", "status"))
            self.db_check("key row gone", "0",
                          "SELECT count(*) FROM \"LiteLLM_VerificationToken\" WHERE key_alias = :'alias'", alias=KEY_ALIAS)
            self.db_check("key archived", "1",
                          "SELECT count(*) FROM \"LiteLLM_DeletedVerificationToken\" WHERE key_alias = :'alias'", alias=KEY_ALIAS)

        self.call("POST", "/team/delete", {"team_ids": [TEAM]})
        self.status_is("POST /team/delete", 200)
        self.call("GET", f"/team/info?team_id={TEAM}")
        self.status_is("GET /team/info of the deleted team", 404)
        self.db_check("team row gone", "0", "SELECT count(*) FROM \"LiteLLM_TeamTable\" WHERE team_id = :'id'", id=TEAM)

        self.call("POST", "/budget/delete", {"id": BUDGET})
        self.status_is("POST /budget/delete", 200)
        self.call("POST", "/budget/info", {"budgets": [BUDGET]})
        self.check("the deleted budget is not found", 0, len(self.body) if isinstance(self.body, list) else "<not a list>")
        self.db_check("budget row gone", "0", "SELECT count(*) FROM \"LiteLLM_BudgetTable\" WHERE budget_id = :'id'", id=BUDGET)

    def leftovers(self, key: str | None) -> None:
        """Best effort, after a failure."""
        self.call("POST", "/model/delete", {"id": MODEL_ID})
        if key:
            self.call("POST", "/key/delete", {"keys": [key]})
        self.call("POST", "/team/delete", {"team_ids": [TEAM]})
        self.call("POST", "/budget/delete", {"id": BUDGET})


def main() -> int:
    smoke = Smoke()
    print(f"# smoke test of {URL} (run {RUN}{', database checks on' if DB else ', no database checks'})")
    key = None
    try:
        smoke.health()
        smoke.team()
        key = smoke.key()
        smoke.budget()
        smoke.model()
        smoke.delete_all(key)
    finally:
        if smoke.failures:
            smoke.leftovers(key)
    print(f"# {smoke.checks} checks, {len(smoke.failures)} failed")
    print(f"{smoke.checks - len(smoke.failures)} passed, {len(smoke.failures)} failed")
    return 1 if smoke.failures else 0


if __name__ == "__main__":
    sys.exit(main())
