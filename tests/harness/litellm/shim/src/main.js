// Entry point of the query-engine shim: what prisma-client-py 0.11 starts as
// its "query engine binary" (through ../engines/query-engine):
//
//   query-engine -p <port> --enable-metrics --enable-raw-queries
//
// with PRISMA_DML_PATH (the schema) and the datasource URL (DATABASE_URL, or
// OVERWRITE_DATASOURCES) in the environment. It serves the native engine's
// HTTP protocol on 127.0.0.1:<port> until it is told to stop (SIGTERM/SIGINT)
// or its parent process goes away.
'use strict';

const fs = require('fs');
const log = require('./log');
const { parseDatamodel, datasourceUrl } = require('./datamodel');
const { Translator } = require('./translate');
const { openDatabase } = require('./pg');
const { startEngine } = require('./engine');
const { Transactions } = require('./transactions');
const { createServer } = require('./server');

const STOP_DEADLINE_MS = 3000;
const EXIT_PANIC = 70;

function portFromArgs(argv) {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '-p' || a === '--port') return Number(argv[i + 1]);
    if (a.startsWith('--port=')) return Number(a.slice('--port='.length));
  }
  return 0;
}

// The parent PID as the kernel has it now (process.ppid may be cached).
function currentParent() {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch (_) {
    return process.ppid;
  }
}

async function main() {
  const port = portFromArgs(process.argv.slice(2));
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error('usage: query-engine -p <port>');
  const dmlPath = process.env.PRISMA_DML_PATH;
  if (!dmlPath) throw new Error('PRISMA_DML_PATH is not set (prisma-client-py sets it)');
  const schemaText = fs.readFileSync(dmlPath, 'utf8');
  const datamodel = parseDatamodel(schemaText);
  if (datamodel.datasource && !/^(postgresql|postgres)$/.test(datamodel.datasource.provider || '')) {
    throw new Error(`datasource provider ${datamodel.datasource.provider}: the shim only supports postgresql`);
  }

  const database = openDatabase(datasourceUrl(datamodel, process.env));
  const engine = await startEngine({ datamodel: schemaText, adapter: database.adapter });
  const transactions = new Transactions(engine);
  const translator = new Translator(datamodel);

  let stopping = false;
  const stop = async (why, code = 0) => {
    if (stopping) return;
    stopping = true;
    log.debug(`stopping (${why})`);
    setTimeout(() => process.exit(code), STOP_DEADLINE_MS).unref();
    server.close();
    const rolledBack = await transactions.rollbackAll().catch(() => 0);
    if (rolledBack) log.info(`rolled back ${rolledBack} open transaction(s) on the way out`);
    await engine.disconnect().catch(() => {});
    await database.pool.end().catch(() => {});
    process.exit(code);
  };

  const server = createServer({
    engine,
    translator,
    transactions,
    // A panicked WebAssembly instance is unusable: exit, and prisma-client-py's
    // user (LiteLLM's engine watcher) starts a new engine process.
    onPanic: (e) => {
      log.error(`${e.message}; exiting so that the client starts a fresh engine`);
      stop('engine panic', EXIT_PANIC);
    },
  });
  server.on('error', (e) => {
    log.error(`cannot serve on 127.0.0.1:${port}: ${e.message}`);
    process.exit(1);
  });
  server.listen(port, '127.0.0.1', () => log.debug(`listening on 127.0.0.1:${server.address().port}`));

  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // Orphaned (the client was killed without stopping us): stop too.
  const parent = currentParent();
  setInterval(() => {
    if (currentParent() !== parent) stop('parent process gone');
  }, 1000).unref();
}

main().catch((e) => {
  log.error('could not start:', e);
  process.exit(1);
});
