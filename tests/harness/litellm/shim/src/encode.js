// Turns the WebAssembly engine's JSON-protocol answers into what the native
// engine answered prisma-client-py 0.11 in the GraphQL protocol:
//
// * the root field is under the alias prisma-client-py asked for (`result`);
// * typed output values {$type, value} become plain values: DateTime, Decimal,
//   Bytes (base64) and Json (serialized JSON) as strings, BigInt as a number
//   (a string beyond 2^53, which pydantic still reads as an int);
// * raw query results ({columns, types, rows}) become the pre-5 row format,
//   a list of {column: {prisma__type, prisma__value}};
// * errors (the same error objects in both protocols) pass unchanged.
'use strict';

function plain(value) {
  if (Array.isArray(value)) return value.map(plain);
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value);
  if (keys.length === 2 && typeof value.$type === 'string' && 'value' in value) {
    if (value.$type === 'BigInt') {
      const n = Number(value.value);
      return Number.isSafeInteger(n) ? n : String(value.value);
    }
    return value.value;
  }
  const out = {};
  for (const k of keys) out[k] = plain(value[k]);
  return out;
}

function legacyCell(type, value) {
  if (value === null || value === undefined) return { prisma__type: 'null', prisma__value: null };
  if (type.endsWith('-array') && Array.isArray(value)) {
    const element = type.slice(0, -'-array'.length);
    return { prisma__type: 'array', prisma__value: value.map((v) => legacyCell(element, v)) };
  }
  if (type === 'json' && typeof value === 'string') {
    try {
      return { prisma__type: 'json', prisma__value: JSON.parse(value) };
    } catch (_) {
      return { prisma__type: 'json', prisma__value: value };
    }
  }
  return { prisma__type: type, prisma__value: value };
}

function legacyRows(result) {
  if (!result || !Array.isArray(result.columns) || !Array.isArray(result.rows)) return result;
  const types = result.types || [];
  return result.rows.map((row) => {
    const out = {};
    result.columns.forEach((column, i) => {
      out[column] = legacyCell(types[i] || 'string', row[i]);
    });
    return out;
  });
}

// One answer (of a single request or of one request of a batch).
function encodeAnswer(answer, action, alias) {
  if (!answer || answer.errors || !answer.data) return answer;
  const [key] = Object.keys(answer.data);
  const value = answer.data[key];
  return { data: { [alias || 'result']: action === 'queryRaw' ? legacyRows(value) : plain(value) } };
}

function encodeBatch(answer, requests) {
  if (!answer || !Array.isArray(answer.batchResult)) return answer;
  return {
    ...answer,
    batchResult: answer.batchResult.map((a, i) => encodeAnswer(a, requests[i].action, requests[i].alias)),
  };
}

// An error in the engine's error format, so prisma-client-py raises it with
// this message (as a DataError when there is no Prisma error code).
function errorAnswer(message, code) {
  const userFacing = { is_panic: false, message };
  if (code) userFacing.error_code = code;
  return { errors: [{ error: message, user_facing_error: userFacing }] };
}

module.exports = { plain, legacyRows, encodeAnswer, encodeBatch, errorAnswer };
