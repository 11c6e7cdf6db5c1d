'use strict';
// node --test: reading Prisma connection URLs, and the text fallback for
// result columns @prisma/adapter-pg cannot map. Needs the shim's npm packages
// (NODE_PATH=<cache>/litellm/node/node_modules); no database.
const test = require('node:test');
const assert = require('node:assert/strict');
const { connectionSettings, retypeColumns } = require('../src/pg');

test('Prisma URL parameters become pool settings', () => {
  const { pool, schema } = connectionSettings(
    'postgresql://u%40x:p%40ss%2Fw%25rd@127.0.0.1:15432/my%20db?schema=tenant_a&connection_limit=3&pool_timeout=20&sslmode=disable&application_name=app',
  );
  assert.equal(schema, 'tenant_a');
  assert.equal(pool.user, 'u@x');
  assert.equal(pool.password, 'p@ss/w%rd');
  assert.equal(pool.host, '127.0.0.1');
  assert.equal(pool.port, 15432);
  assert.equal(pool.database, 'my db');
  assert.equal(pool.max, 3);
  assert.equal(pool.connectionTimeoutMillis, 20000);
  assert.equal(pool.ssl, false);
  assert.equal(pool.application_name, 'app');
  assert.equal(pool.options, '-c search_path="tenant_a"');
});

test('defaults and TLS modes', () => {
  const plain = connectionSettings('postgres://h/db');
  assert.equal(plain.pool.port, 5432);
  assert.equal(plain.pool.max, 10);
  assert.equal(plain.pool.ssl, false); // prefer: no fallback in node-postgres, so plain
  assert.equal(plain.schema, undefined);
  assert.deepEqual(connectionSettings('postgresql://h/db?sslmode=require').pool.ssl, { rejectUnauthorized: false });
  assert.deepEqual(connectionSettings('postgresql://h/db?sslmode=verify-full').pool.ssl, {});
  assert.throws(() => connectionSettings('mysql://h/db'), /only speaks PostgreSQL/);
  assert.throws(() => connectionSettings('not a url'), /not a valid URL/);
});

test('columns of unmapped types are served as text and text[]', () => {
  const result = {
    fields: [
      { name: 'viewname', dataTypeID: 19 }, // name
      { name: 'names', dataTypeID: 1003 }, // name[]
      { name: 'n', dataTypeID: 23 }, // int4: the adapter's own
      { name: 'iv', dataTypeID: 1186 }, // interval
    ],
    rows: [['v', '{"a b",c,NULL}', 1, '1 day 02:00:00'], [null, null, 2, null]],
  };
  retypeColumns(result, (oid) => oid === 1003);
  assert.deepEqual(result.fields.map((f) => f.dataTypeID), [25, 1009, 23, 25]);
  assert.deepEqual(result.rows, [['v', ['a b', 'c', null], 1, '1 day 02:00:00'], [null, null, 2, null]]);

  // before the database said which types are arrays: by the text form
  const early = { fields: [{ name: 'a', dataTypeID: 1185 }, { name: 'b', dataTypeID: 19 }], rows: [['{"2024-01-01 00:00:00+00"}', 'x']] };
  retypeColumns(early, () => null);
  assert.deepEqual(early.rows, [[['2024-01-01 00:00:00+00'], 'x']]);
  assert.deepEqual(early.fields.map((f) => f.dataTypeID), [1009, 25]);
});
