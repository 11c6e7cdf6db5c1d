// Interactive transactions (prisma-client-py's `async with db.tx()`):
//
//   POST /transaction/start               {"timeout": ms, "max_wait": ms[, "isolation_level": ...]}
//                                         -> {"id": "<transaction id>"}
//   POST /  with header X-transaction-id  queries inside it
//   POST /transaction/<id>/commit|rollback
//
// The engine keeps the transaction (on a connection of its own from the pool)
// and expires it after `timeout`. This module normalises the options, keeps
// the list of open transactions so that they are rolled back when the shim
// stops, and reports how many are open.
'use strict';

const log = require('./log');

const DEFAULT_MAX_WAIT_MS = 2000; // prisma-client-py's defaults
const DEFAULT_TIMEOUT_MS = 5000;
const ISOLATION_LEVELS = new Set(['ReadUncommitted', 'ReadCommitted', 'RepeatableRead', 'Serializable', 'Snapshot']);

class BadTransactionOptions extends Error {
  constructor(message) {
    super(message);
    this.name = 'BadTransactionOptions';
    this.clientFault = true;
  }
}

function positiveInt(value, fallback) {
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}

// The request body (camelCase or snake_case) -> the engine's options.
function transactionOptions(bodyText) {
  let body = {};
  if (bodyText && bodyText.trim()) {
    try {
      body = JSON.parse(bodyText);
    } catch (e) {
      throw new BadTransactionOptions(`transaction options are not JSON: ${e.message}`);
    }
  }
  const options = {
    max_wait: positiveInt(body.max_wait ?? body.maxWait, DEFAULT_MAX_WAIT_MS),
    timeout: positiveInt(body.timeout, DEFAULT_TIMEOUT_MS),
  };
  const isolation = body.isolation_level ?? body.isolationLevel;
  if (isolation !== undefined && isolation !== null) {
    if (!ISOLATION_LEVELS.has(isolation)) throw new BadTransactionOptions(`unknown isolation level ${JSON.stringify(isolation)}`);
    options.isolation_level = isolation;
  }
  return options;
}

class Transactions {
  constructor(engine) {
    this.engine = engine;
    this.open = new Map(); // id -> expiry (ms since epoch)
  }

  async start(bodyText) {
    const options = transactionOptions(bodyText);
    const answer = await this.engine.startTransaction(options);
    if (answer && answer.id) {
      this.forgetExpired();
      this.open.set(answer.id, Date.now() + options.timeout + options.max_wait);
      log.debug(`transaction ${answer.id} started (${this.open.size} open)`);
    }
    return answer;
  }

  async finish(id, outcome) {
    const answer = outcome === 'commit'
      ? await this.engine.commitTransaction(id)
      : await this.engine.rollbackTransaction(id);
    this.open.delete(id);
    log.debug(`transaction ${id}: ${outcome} -> ${JSON.stringify(answer)}`);
    return answer;
  }

  // The engine has rolled these back itself already.
  forgetExpired() {
    const now = Date.now();
    for (const [id, expiry] of this.open) if (expiry < now) this.open.delete(id);
  }

  async rollbackAll() {
    this.forgetExpired();
    const ids = [...this.open.keys()];
    await Promise.allSettled(ids.map((id) => this.finish(id, 'rollback')));
    return ids.length;
  }
}

module.exports = { Transactions, transactionOptions };
