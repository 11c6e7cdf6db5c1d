'use strict';
// node --test: the parser of prisma-client-py's GraphQL documents.
const test = require('node:test');
const assert = require('node:assert/strict');
const { parseDocument, BigIntLiteral } = require('../src/graphql');

// Shaped like prisma-client-py 0.11's QueryBuilder output.
const UPDATE = `mutation {
  result: updateOneLiteLLM_TeamTable
  (
    where: {
      team_id: "t-1"
    }
    data: {
      metadata: "{\\"note\\": \\"quote \\\\\\" tab\\\\t \\u00e9 \\ud83d\\ude00\\"}"
      models: [
        "gpt-4",
        "gpt-4o"
      ]
      spend: {
        increment: 0.5
      }
      tpm_limit: 123456789012345678901
      blocked: false
      team_alias: null
    }
  )
  {
    team_id
    litellm_model_table {
      id
    }
    members(
      where: {
        user_id: {
          in: ["u-1"]
        }
      }
    )
    {
      user_id
    }
  }
}`;

test('parses a mutation with arguments and nested selections', () => {
  const doc = parseDocument(UPDATE);
  assert.equal(doc.operation, 'mutation');
  assert.equal(doc.root.alias, 'result');
  assert.equal(doc.root.name, 'updateOneLiteLLM_TeamTable');
  assert.deepEqual(doc.root.args.where, { team_id: 't-1' });
  const data = doc.root.args.data;
  assert.equal(JSON.parse(data.metadata).note, 'quote " tab\t é 😀');
  assert.deepEqual(data.models, ['gpt-4', 'gpt-4o']);
  assert.deepEqual(data.spend, { increment: 0.5 });
  assert.ok(data.tpm_limit instanceof BigIntLiteral);
  assert.equal(JSON.stringify(data.tpm_limit), '{"$type":"BigInt","value":"123456789012345678901"}');
  assert.equal(data.blocked, false);
  assert.equal(data.team_alias, null);
  const [id, model, members] = doc.root.selection;
  assert.deepEqual(id, { alias: null, name: 'team_id', args: null, selection: null });
  assert.equal(model.selection[0].name, 'id');
  assert.deepEqual(members.args, { where: { user_id: { in: ['u-1'] } } });
  assert.equal(members.selection[0].name, 'user_id');
});

test('reads numbers as JSON writes them', () => {
  const doc = parseDocument('query { result: findManyX(take: 10, skip: 0, where: { a: { gt: -1.5e-7 }, b: 9007199254740991 }) { a } }');
  assert.equal(doc.root.args.take, 10);
  assert.equal(doc.root.args.where.a.gt, -1.5e-7);
  assert.equal(doc.root.args.where.b, 9007199254740991);
});

test('bare words are enum values', () => {
  const doc = parseDocument('query { result: findManyX(orderBy: { a: desc }, where: { b: { mode: insensitive } }) { a } }');
  assert.deepEqual(doc.root.args, { orderBy: { a: 'desc' }, where: { b: { mode: 'insensitive' } } });
});

test('keeps raw query parameters as the JSON string prisma-client-py sends', () => {
  const doc = parseDocument('mutation {\n  result: queryRaw\n  (\n    query: "SELECT $1::text"\n    parameters: "[\\"a\\\\\\"b\\"]"\n  )\n}');
  assert.equal(doc.root.name, 'queryRaw');
  assert.equal(doc.root.selection, null);
  assert.deepEqual(JSON.parse(doc.root.args.parameters), ['a"b']);
});

test('refuses what it does not support, with the reason', () => {
  assert.throws(() => parseDocument('query { a { b } c { d } }'), /only one root field/);
  assert.throws(() => parseDocument('query { result: findManyX(where: { a: NaN }) { a } }'), /NaN cannot be sent/);
  assert.throws(() => parseDocument('query { result: findManyX(where: { a: -Infinity }) { a } }'), /-Infinity/);
  assert.throws(() => parseDocument('query { result: findManyX(where: { a: "x }) { a } }'), /unterminated string/);
  assert.throws(() => parseDocument('query { result: findManyX(where: { a: 1, a: 2 }) { a } }'), /duplicate key "a"/);
  assert.throws(() => parseDocument('subscription { a }'), /unsupported operation type/);
  assert.throws(() => parseDocument('query { ...frag }'), /unexpected character/);
});
