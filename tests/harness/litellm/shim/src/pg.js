// The database side: a node-postgres pool configured from a Prisma connection
// URL, wrapped in Prisma's driver adapter for PostgreSQL (@prisma/adapter-pg).
//
// Two fix-ups:
//
// * Prisma URLs carry parameters node-postgres does not know (connection_limit,
//   pool_timeout, schema, sslaccept, ...). The URL is read here, the way the
//   native engine reads it, into an explicit pool configuration.
// * adapter-pg 5.17 refuses result columns of built-in types it has no
//   mapping for (name, "char", regclass, interval, timestamptz[], name[], ...)
//   with "Unsupported column type". The native engine returned them as text,
//   and LiteLLM's raw queries select some (pg_views.viewname is a `name`).
//   Every client of the pool is set up to hand such columns over as text
//   (text[] for arrays), before the adapter sees them.
'use strict';

const fs = require('fs');
const pg = require('pg');
const { parse: parseArrayLiteral } = require('postgres-array');
const { PrismaPg } = require('@prisma/adapter-pg');
const { bindAdapter } = require('@prisma/driver-adapter-utils');
const log = require('./log');

// Column type OIDs adapter-pg 5.17.0 maps itself (its fieldToColumnType);
// OIDs >= 10000 (enums and other user types) it reads as text.
const ADAPTER_OIDS = new Set([
  16, 17, 20, 21, 23, 25, 26, 114, 142, 650, 700, 701, 790, 869, 1042, 1043, 1082, 1083, 1114,
  1184, 1266, 1560, 1562, 1700, 2950, 3802,
  // arrays
  143, 199, 651, 791, 1000, 1001, 1002, 1005, 1007, 1009, 1014, 1015, 1016, 1021, 1022, 1028,
  1041, 1115, 1182, 1183, 1231, 1561, 1563, 2951, 3807,
]);
const TEXT_OID = 25;
const TEXT_ARRAY_OID = 1009;
const adapterReads = (oid) => oid >= 10000 || ADAPTER_OIDS.has(oid);
const rawText = (text) => text;

function sslSettings(params) {
  const mode = params.get('sslmode') || 'prefer';
  // Without TLS for the modes that allow a plain connection: node-postgres
  // cannot fall back from TLS to plain the way libpq's `prefer` does.
  if (mode === 'disable' || mode === 'allow' || mode === 'prefer') return false;
  const ssl = {};
  // Prisma's name for the CA file is sslcert; libpq's is sslrootcert.
  const ca = params.get('sslrootcert') || params.get('sslcert');
  if (ca) ssl.ca = fs.readFileSync(ca, 'utf8');
  const identity = params.get('sslidentity');
  if (identity) log.warn('sslidentity (PKCS#12 client certificates) is not supported; ignored');
  if (mode === 'require' && !ca) ssl.rejectUnauthorized = false;
  else if (params.get('sslaccept') === 'accept_invalid_certs') ssl.rejectUnauthorized = false;
  if (mode === 'verify-ca') ssl.checkServerIdentity = () => undefined;
  return ssl;
}

// A Prisma PostgreSQL URL -> {pool: pg.Pool options, schema}.
function connectionSettings(url) {
  let u;
  try {
    u = new URL(url);
  } catch (_) {
    throw new Error('the database URL is not a valid URL');
  }
  if (u.protocol !== 'postgresql:' && u.protocol !== 'postgres:') {
    throw new Error(`unsupported database URL scheme ${u.protocol} (the shim only speaks PostgreSQL)`);
  }
  const p = u.searchParams;
  const schema = p.get('schema') || undefined;
  const options = [];
  if (p.get('options')) options.push(p.get('options'));
  if (schema) options.push(`-c search_path="${schema.replace(/"/g, '""')}"`);
  const seconds = (name) => {
    const v = Number(p.get(name));
    return Number.isFinite(v) && v > 0 ? v * 1000 : undefined;
  };
  const limit = parseInt(p.get('connection_limit') || '', 10);
  const pool = {
    host: p.get('host') || decodeURIComponent(u.hostname.replace(/^\[|\]$/g, '')) || 'localhost',
    port: u.port ? Number(u.port) : 5432,
    user: decodeURIComponent(u.username) || undefined,
    password: decodeURIComponent(u.password) || undefined,
    database: decodeURIComponent(u.pathname.replace(/^\//, '')) || undefined,
    ssl: sslSettings(p),
    max: limit > 0 ? limit : 10,
    connectionTimeoutMillis: seconds('connect_timeout') || seconds('pool_timeout') || 10000,
    application_name: p.get('application_name') || 'litellm-qe-shim',
    options: options.length ? options.join(' ') : undefined,
  };
  return { pool, schema };
}

// Wraps client.query so that the adapter's queries (row mode 'array', with
// their own type parsers) get columns the adapter cannot map as text.
function serveUnmappedColumnsAsText(client, arrays) {
  const query = client.query;
  client.query = function queryWithTextFallback(config, values, callback) {
    if (!config || typeof config !== 'object' || config.rowMode !== 'array') {
      return query.apply(this, arguments);
    }
    const parsers = config.types;
    const adjusted = {
      ...config,
      types: {
        getTypeParser: (oid, format) => (adapterReads(oid)
          ? (parsers ? parsers.getTypeParser(oid, format) : pg.types.getTypeParser(oid, format))
          : rawText),
      },
    };
    const fix = (result) => {
      for (const r of Array.isArray(result) ? result : [result]) retypeColumns(r, arrays);
      return result;
    };
    const cb = typeof values === 'function' ? values : callback;
    if (typeof cb === 'function') {
      const wrapped = (err, result) => cb(err, err ? result : fix(result));
      return typeof values === 'function' ? query.call(this, adjusted, wrapped) : query.call(this, adjusted, values, wrapped);
    }
    return query.call(this, adjusted, values).then(fix);
  };
}

// `arrays` answers whether a type OID is an array type (null: not known yet).
function retypeColumns(result, arrays) {
  if (!result || !Array.isArray(result.fields)) return;
  result.fields.forEach((field, i) => {
    if (adapterReads(field.dataTypeID)) return;
    let isArray = arrays(field.dataTypeID);
    if (isArray === null) {
      // Until the database has told which types are arrays: by the text form.
      isArray = result.rows.every((row) => row[i] === null || /^\{.*\}$/s.test(String(row[i])));
    }
    for (const row of result.rows) {
      const v = row[i];
      if (v === null || v === undefined) row[i] = null;
      else if (isArray) row[i] = parseArrayLiteral(String(v)).map((x) => (Array.isArray(x) ? JSON.stringify(x) : x));
      else row[i] = String(v);
    }
    log.debug(`column ${field.name}: type oid ${field.dataTypeID} served as ${isArray ? 'text[]' : 'text'}`);
    field.dataTypeID = isArray ? TEXT_ARRAY_OID : TEXT_OID;
  });
}

const ARRAY_TYPES_SQL = "SELECT oid::int AS oid FROM pg_type WHERE typcategory = 'A' AND oid < 10000";

// The pool and the bound driver adapter for `url`.
function openDatabase(url) {
  const { pool: poolOptions, schema } = connectionSettings(url);
  const pool = new pg.Pool(poolOptions);

  // Which built-in types are arrays: asked once, again after a failure.
  let arrayOids = null;
  let asking = null;
  const askArrayTypes = () => {
    if (arrayOids || asking) return;
    asking = pool.query(ARRAY_TYPES_SQL).then(
      (r) => { arrayOids = new Set(r.rows.map((row) => row.oid)); },
      (e) => log.debug('could not read the array types of the database:', e.message),
    ).finally(() => { asking = null; });
  };
  const arrays = (oid) => {
    if (arrayOids) return arrayOids.has(oid);
    askArrayTypes();
    return null;
  };
  askArrayTypes();

  pool.on('connect', (client) => serveUnmappedColumnsAsText(client, arrays));
  // An idle client whose connection breaks (server restart, terminated
  // backend, dropped database) makes the pool emit 'error': log, do not die.
  pool.on('error', (e) => log.warn('idle database connection lost:', e.message));
  const adapter = bindAdapter(new PrismaPg(pool, schema ? { schema } : undefined));
  return { pool, adapter };
}

module.exports = { connectionSettings, openDatabase, retypeColumns, ADAPTER_OIDS };
