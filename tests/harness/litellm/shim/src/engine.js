// Prisma's query engine compiled to WebAssembly (shipped in the npm package
// @prisma/client 5.17.0 for its driver-adapter mode), instantiated in this
// process and connected through a driver adapter (see pg.js).
//
// The wrapper below speaks objects instead of the engine's JSON strings and
// marks a panic: a panicking WebAssembly instance cannot be used again.
'use strict';

const fs = require('fs');
const log = require('./log');

const RUNTIME = '@prisma/client/runtime/query_engine_bg.postgresql.js';
const BINARY = '@prisma/client/runtime/query_engine_bg.postgresql.wasm';
const NO_TRACE = '{}';

class EnginePanic extends Error {
  constructor(cause) {
    super(`query engine panicked: ${cause && cause.message}`);
    this.name = 'EnginePanic';
    this.cause = cause;
  }
}

function instantiate() {
  const runtime = require(RUNTIME);
  const module = new WebAssembly.Module(fs.readFileSync(require.resolve(BINARY)));
  // wasm-bindgen glue: every import of the module is served by the runtime file.
  const imports = {};
  for (const { module: name } of WebAssembly.Module.imports(module)) imports[name] = runtime;
  const instance = new WebAssembly.Instance(module, imports);
  runtime.__wbg_set_wasm(instance.exports);
  return runtime;
}

// Engine log lines are JSON ({level, message, ...}). Errors and warnings are
// always shown, the rest only with LITELLM_QE_SHIM_DEBUG=1.
function engineLogger(line) {
  let level = 'debug';
  try {
    const parsed = JSON.parse(line);
    level = String(parsed.level || '').toLowerCase();
  } catch (_) { /* not JSON: keep as debug */ }
  if (level === 'error') log.error('engine:', line);
  else if (level === 'warn') log.warn('engine:', line);
  else log.debug('engine:', line);
}

async function startEngine({ datamodel, adapter }) {
  const runtime = instantiate();
  const raw = new runtime.QueryEngine({
    datamodel,
    configDir: process.cwd(),
    engineProtocol: 'json',
    env: process.env,
    ignoreEnvVarErrors: true,
    datasourceOverrides: {},
    logQueries: false,
    logLevel: log.debugEnabled ? 'info' : 'warn',
  }, engineLogger, adapter);

  let panicked = null;
  const call = async (method, ...args) => {
    if (panicked) throw panicked;
    try {
      const out = await raw[method](...args);
      return typeof out === 'string' && out.length ? JSON.parse(out) : {};
    } catch (e) {
      if (e instanceof WebAssembly.RuntimeError) {
        panicked = new EnginePanic(e);
        throw panicked;
      }
      throw e;
    }
  };

  await call('connect', NO_TRACE);
  return {
    query: (request, txId) => call('query', JSON.stringify(request), NO_TRACE, txId || undefined),
    startTransaction: (options) => call('startTransaction', JSON.stringify(options), NO_TRACE),
    commitTransaction: (id) => call('commitTransaction', id, NO_TRACE),
    rollbackTransaction: (id) => call('rollbackTransaction', id, NO_TRACE),
    metrics: (options) => call('metrics', JSON.stringify(options || {})),
    disconnect: () => call('disconnect', NO_TRACE),
    get panicked() {
      return panicked;
    },
  };
}

module.exports = { startEngine, EnginePanic };
