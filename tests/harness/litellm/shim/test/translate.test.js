'use strict';
// node --test: GraphQL requests -> JSON protocol, with Json tagging from the schema.
const test = require('node:test');
const assert = require('node:assert/strict');
const { parseDatamodel, datasourceUrl } = require('../src/datamodel');
const { Translator } = require('../src/translate');

const SCHEMA = `
datasource client {
  provider = "postgresql"
  url      = env("DATABASE_URL") // a comment with "quotes"
}

model Team {
  team_id  String  @id
  alias    String? @default("http://x//y")
  metadata Json    @default("{}")
  tags     Json[]
  members  Member[]
  budget   Budget? @relation(fields: [budget_id], references: [id])
  budget_id String?
  @@map("teams")
}

model Member {
  id      String @id
  team    Team   @relation(fields: [team_id], references: [team_id])
  team_id String
  info    Json?
}

model Budget {
  id    String @id
  rules Json?
  teams Team[]
}
`;

const dm = parseDatamodel(SCHEMA);
const translator = new Translator(dm);
const J = (value) => ({ $type: 'Json', value });

test('reads models, field kinds and the datasource', () => {
  assert.deepEqual([...dm.models.keys()], ['Team', 'Member', 'Budget']);
  const team = dm.models.get('Team');
  assert.equal(team.fields.get('metadata').type, 'Json');
  assert.equal(team.fields.get('tags').list, true);
  assert.equal(team.fields.get('alias').optional, true);
  assert.equal(team.fields.get('members').kind, 'object');
  assert.equal(team.fields.has('@@map'), false);
  assert.equal(dm.datasource.provider, 'postgresql');
  assert.equal(datasourceUrl(dm, { DATABASE_URL: 'postgresql://a@b/c' }), 'postgresql://a@b/c');
  assert.equal(datasourceUrl(dm, { DATABASE_URL: 'x', OVERWRITE_DATASOURCES: '[{"name":"client","url":"postgresql://o@p/q"}]' }), 'postgresql://o@p/q');
  assert.throws(() => datasourceUrl(dm, {}), /DATABASE_URL is not set/);
});

test('splits operation names, including OrThrow after the model', () => {
  assert.deepEqual(translator.operation('findUniqueTeam'), { action: 'findUnique', modelName: 'Team' });
  assert.deepEqual(translator.operation('findFirstTeamOrThrow'), { action: 'findFirstOrThrow', modelName: 'Team' });
  assert.deepEqual(translator.operation('findUniqueOrThrowTeam'), { action: 'findUniqueOrThrow', modelName: 'Team' });
  assert.deepEqual(translator.operation('createManyMember'), { action: 'createMany', modelName: 'Member' });
  assert.deepEqual(translator.operation('createManyAndReturnMember'), { action: 'createManyAndReturn', modelName: 'Member' });
  assert.deepEqual(translator.operation('aggregateBudget'), { action: 'aggregate', modelName: 'Budget' });
  assert.deepEqual(translator.operation('executeRaw'), { action: 'executeRaw', modelName: undefined });
  assert.throws(() => translator.operation('findUniqueNoSuchModel'), /unsupported operation "findUniqueNoSuchModel"/);
  assert.throws(() => translator.operation('runCommandRaw'), /unsupported operation/);
});

test('tags Json data, including nested relation writes', () => {
  const { body, alias, action } = translator.request(`mutation {
    result: createOneTeam(data: {
      team_id: "t"
      metadata: "{\\"a\\": 1}"
      tags: ["[1]", "{}"]
      members: { create: [{ id: "m", info: "null" }], createMany: { data: [{ id: "n", info: "2" }] } }
      budget: { connectOrCreate: { where: { id: "b" }, create: { id: "b", rules: "[]" } } }
    }) { team_id members { id info } }
  }`);
  assert.equal(alias, 'result');
  assert.equal(action, 'createOne');
  assert.equal(body.modelName, 'Team');
  const data = body.query.arguments.data;
  assert.deepEqual(data.metadata, J('{"a": 1}'));
  assert.deepEqual(data.tags, [J('[1]'), J('{}')]);
  assert.deepEqual(data.members.create, [{ id: 'm', info: J('null') }]);
  assert.deepEqual(data.members.createMany.data, [{ id: 'n', info: J('2') }]);
  assert.deepEqual(data.budget.connectOrCreate, { where: { id: 'b' }, create: { id: 'b', rules: J('[]') } });
  assert.deepEqual(body.query.selection, { team_id: true, members: { selection: { id: true, info: true } } });
});

test('tags Json in updates: set, null, nested update forms, upsert', () => {
  const { body } = translator.request(`mutation {
    result: updateOneTeam(where: { team_id: "t" }, data: {
      metadata: { set: "{}" }
      alias: null
      members: { update: [{ where: { id: "m" }, data: { info: "1" } }], updateMany: { where: { info: { equals: "1" } }, data: { info: "2" } } }
      budget: { update: { rules: "3" } }
    }) { team_id }
  }`);
  const data = body.query.arguments.data;
  assert.deepEqual(data.metadata, { set: J('{}') });
  assert.equal(data.alias, null);
  assert.deepEqual(data.members.update, [{ where: { id: 'm' }, data: { info: J('1') } }]);
  assert.deepEqual(data.members.updateMany, { where: { info: { equals: J('1') } }, data: { info: J('2') } });
  assert.deepEqual(data.budget.update, { rules: J('3') });

  const upsert = translator.request(`mutation { result: upsertOneBudget(where: { id: "b" }, create: { id: "b", rules: "1" }, update: { rules: "2" }) { id } }`);
  assert.deepEqual(upsert.body.query.arguments.create, { id: 'b', rules: J('1') });
  assert.deepEqual(upsert.body.query.arguments.update, { rules: J('2') });
});

test('tags Json filter operands, also through AND/OR/NOT and relation filters', () => {
  const { body } = translator.request(`query {
    result: findManyTeam(where: {
      metadata: { path: ["a"], equals: "5" }
      AND: [{ metadata: { path: ["s"], string_contains: "needle" } }, { metadata: { array_contains: "[\\"x\\"]" } }]
      NOT: { metadata: { equals: "{}" } }
      members: { some: { info: { not: "null" } } }
      budget: { is: { rules: { equals: "[]" } } }
    }, take: 2, orderBy: { team_id: desc }) { team_id }
  }`);
  const where = body.query.arguments.where;
  assert.deepEqual(where.metadata, { path: ['a'], equals: J('5') });
  assert.deepEqual(where.AND, [{ metadata: { path: ['s'], string_contains: 'needle' } }, { metadata: { array_contains: J('["x"]') } }]);
  assert.deepEqual(where.NOT, { metadata: { equals: J('{}') } });
  assert.deepEqual(where.members, { some: { info: { not: J('null') } } });
  assert.deepEqual(where.budget, { is: { rules: { equals: J('[]') } } });
  assert.deepEqual(body.query.arguments.orderBy, { team_id: 'desc' });
  assert.equal(body.query.arguments.take, 2);
});

test('include arguments are read in the related model', () => {
  const { body } = translator.request(`query {
    result: findUniqueTeam(where: { team_id: "t" }) { team_id members(where: { info: { equals: "1" } }, take: 1) { id } }
  }`);
  assert.deepEqual(body.query.selection.members, {
    arguments: { where: { info: { equals: J('1') } }, take: 1 },
    selection: { id: true },
  });
});

test('aggregates, group by and raw queries keep their shapes', () => {
  const count = translator.request('query { result: aggregateTeam(where: { alias: { startsWith: "a" } }) { _count { _all } } }');
  assert.deepEqual(count.body, {
    modelName: 'Team', action: 'aggregate',
    query: { arguments: { where: { alias: { startsWith: 'a' } } }, selection: { _count: { selection: { _all: true } } } },
  });
  const group = translator.request('query { result: groupByTeam(by: ["alias"], orderBy: [{ alias: asc }]) { alias _count { _all } _sum { team_id } } }');
  assert.deepEqual(group.body.query.arguments, { by: ['alias'], orderBy: [{ alias: 'asc' }] });
  const raw = translator.request('mutation { result: queryRaw(query: "SELECT 1", parameters: "[]") }');
  assert.deepEqual(raw.body, { modelName: undefined, action: 'queryRaw', query: { arguments: { query: 'SELECT 1', parameters: '[]' }, selection: {} } });
});
