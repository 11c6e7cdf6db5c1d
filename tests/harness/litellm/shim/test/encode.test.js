'use strict';
// node --test: JSON protocol answers -> prisma-client-py 0.11's expectations,
// transaction options, connection URL reading and the text fallback for
// column types the driver adapter does not map.
const test = require('node:test');
const assert = require('node:assert/strict');
const { encodeAnswer, encodeBatch, errorAnswer } = require('../src/encode');
const { transactionOptions } = require('../src/transactions');

test('typed values become plain values under the alias', () => {
  const answer = {
    data: {
      findUniqueTeam: {
        team_id: 't',
        created_at: { $type: 'DateTime', value: '2024-01-02T03:04:05.678Z' },
        tpm_limit: { $type: 'BigInt', value: '42' },
        huge: { $type: 'BigInt', value: '9007199254740993' },
        spend: { $type: 'Decimal', value: '1.50' },
        metadata: { $type: 'Json', value: '{"$type":"Json","value":"not a tag: user data"}' },
        models: ['a'],
        members: [{ joined: { $type: 'DateTime', value: '2024-01-01T00:00:00.000Z' } }],
      },
    },
  };
  assert.deepEqual(encodeAnswer(answer, 'findUnique', 'result'), {
    data: {
      result: {
        team_id: 't',
        created_at: '2024-01-02T03:04:05.678Z',
        tpm_limit: 42,
        huge: '9007199254740993',
        spend: '1.50',
        metadata: '{"$type":"Json","value":"not a tag: user data"}',
        models: ['a'],
        members: [{ joined: '2024-01-01T00:00:00.000Z' }],
      },
    },
  });
  assert.deepEqual(encodeAnswer({ data: { findUniqueTeam: null } }, 'findUnique'), { data: { result: null } });
});

test('raw results become the legacy row format', () => {
  const answer = {
    data: {
      queryRaw: {
        columns: ['i', 'big', 'j', 'arr', 'nul'],
        types: ['int', 'bigint', 'json', 'string-array', 'string'],
        rows: [[1, '2', '{"a":1}', ['x', null], null]],
      },
    },
  };
  assert.deepEqual(encodeAnswer(answer, 'queryRaw', 'result').data.result, [{
    i: { prisma__type: 'int', prisma__value: 1 },
    big: { prisma__type: 'bigint', prisma__value: '2' },
    j: { prisma__type: 'json', prisma__value: { a: 1 } },
    arr: { prisma__type: 'array', prisma__value: [{ prisma__type: 'string', prisma__value: 'x' }, { prisma__type: 'null', prisma__value: null }] },
    nul: { prisma__type: 'null', prisma__value: null },
  }]);
  assert.deepEqual(encodeAnswer({ data: { executeRaw: 3 } }, 'executeRaw', 'result'), { data: { result: 3 } });
});

test('errors and batches', () => {
  const err = { errors: [{ error: 'x', user_facing_error: { is_panic: false, message: 'x', error_code: 'P2002', meta: { target: ['a'] } } }] };
  assert.equal(encodeAnswer(err, 'createOne'), err);
  const batch = encodeBatch({ batchResult: [{ data: { updateOneTeam: { n: { $type: 'BigInt', value: '1' } } } }, { data: { deleteOneTeam: null } }] },
    [{ action: 'updateOne', alias: 'result' }, { action: 'deleteOne', alias: 'result' }]);
  assert.deepEqual(batch, { batchResult: [{ data: { result: { n: 1 } } }, { data: { result: null } }] });
  assert.deepEqual(errorAnswer('nope'), { errors: [{ error: 'nope', user_facing_error: { is_panic: false, message: 'nope' } }] });
});

test('transaction options', () => {
  assert.deepEqual(transactionOptions('{"timeout": 10000, "max_wait": 3000}'), { max_wait: 3000, timeout: 10000 });
  assert.deepEqual(transactionOptions(''), { max_wait: 2000, timeout: 5000 });
  assert.deepEqual(transactionOptions('{"maxWait": 1, "isolationLevel": "Serializable"}'), { max_wait: 1, timeout: 5000, isolation_level: 'Serializable' });
  assert.throws(() => transactionOptions('{"isolation_level": "Chaos"}'), /unknown isolation level/);
  assert.throws(() => transactionOptions('{'), /not JSON/);
});
