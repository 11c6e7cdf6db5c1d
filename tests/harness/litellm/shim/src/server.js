// The HTTP side of the native query engine's protocol, as prisma-client-py
// 0.11 uses it (prisma/engine/query.py):
//
//   GET  /status                           {"status": "ok"} once ready
//   POST /                                 {"query": "<graphql>", "variables": {}}
//                                          or {"batch": [{"query": ...}, ...], "transaction": true}
//   POST /transaction/start                see transactions.js
//   POST /transaction/<id>/commit|rollback
//   GET  /metrics?format=json|prometheus
//
// Answers use the engine's error format ({"errors": [...]}) with HTTP 200 for
// query errors, as the native engine does; prisma-client-py turns them into
// its exceptions (UniqueViolationError, RecordNotFoundError, DataError, ...).
'use strict';

const http = require('http');
const log = require('./log');
const { encodeAnswer, encodeBatch, errorAnswer } = require('./encode');
const { EnginePanic } = require('./engine');

const MAX_BODY_BYTES = 256 * 1024 * 1024;
const EMPTY_METRICS = { counters: [], gauges: [], histograms: [] };

class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new HttpError(413, 'request body too large'));
        req.destroy();
      } else {
        chunks.push(chunk);
      }
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new HttpError(400, `request body is not JSON: ${e.message}`);
  }
}

function createServer({ engine, translator, transactions, onPanic }) {
  async function graphql(bodyText, txId) {
    const body = parseJson(bodyText);
    if (Array.isArray(body.batch)) {
      const requests = body.batch.map((item) => translator.request(item.query));
      const batch = { batch: requests.map((r) => r.body) };
      if (body.transaction) batch.transaction = body.isolation_level ? { isolationLevel: body.isolation_level } : {};
      log.debug('batch', batch);
      return encodeBatch(await engine.query(batch, txId), requests);
    }
    const request = translator.request(body.query);
    log.debug('query', request.body);
    return encodeAnswer(await engine.query(request.body, txId), request.action, request.alias);
  }

  async function metrics(query) {
    const format = query.get('format') === 'prometheus' ? 'prometheus' : 'json';
    let answer;
    try {
      answer = await engine.metrics({ format });
    } catch (_) {
      answer = null; // the WebAssembly engine is built without metrics
    }
    if (format === 'prometheus') return { type: 'text/plain', body: typeof answer === 'string' ? answer : '' };
    return { body: answer && typeof answer === 'object' && !answer.errors ? answer : EMPTY_METRICS };
  }

  async function route(req, url) {
    const path = url.pathname;
    if (req.method === 'GET' && path === '/status') return { body: { status: 'ok' } };
    if (req.method === 'GET' && path === '/metrics') return metrics(url.searchParams);
    if (req.method !== 'POST') throw new HttpError(404, `no route ${req.method} ${path}`);
    const bodyText = await readBody(req);
    if (path === '/') return { body: await graphql(bodyText, req.headers['x-transaction-id']) };
    if (path === '/transaction/start') return { body: await transactions.start(bodyText) };
    const m = /^\/transaction\/([^/]+)\/(commit|rollback)$/.exec(path);
    if (m) return { body: await transactions.finish(decodeURIComponent(m[1]), m[2]) };
    throw new HttpError(404, `no route ${req.method} ${path}`);
  }

  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://shim');
    route(req, url).then(
      ({ status = 200, type = 'application/json', body }) => {
        res.writeHead(status, { 'content-type': type });
        res.end(typeof body === 'string' ? body : JSON.stringify(body));
      },
      (e) => {
        let status = 500;
        if (e instanceof HttpError) status = e.status;
        // Requests the shim cannot translate are answered like requests the
        // engine rejects: HTTP 200 with an error the client raises.
        else if (e && e.clientFault) status = 200;
        if (status >= 500) log.error(`${req.method} ${url.pathname} failed:`, e);
        else log.warn(`${req.method} ${url.pathname}: ${e.message}`);
        if (!res.headersSent) {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(errorAnswer(e.message)));
        }
        if (e instanceof EnginePanic) onPanic(e);
      },
    );
  });
  // prisma-client-py (httpx) keeps idle connections open for a while; the
  // server must not close them first, or a request can meet a closing socket.
  server.keepAliveTimeout = 10 * 60 * 1000;
  server.headersTimeout = server.keepAliveTimeout + 1000;
  server.requestTimeout = 0;
  return server;
}

module.exports = { createServer };
