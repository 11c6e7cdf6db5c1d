// Logging of the query-engine shim. Everything goes to stderr, which
// prisma-client-py hands on to the LiteLLM proxy's own log; every line is
// prefixed so it can be told apart from LiteLLM's messages.
'use strict';

const DEBUG = /^(1|true|yes|on)$/i.test(process.env.LITELLM_QE_SHIM_DEBUG || '');

function emit(level, parts) {
  const text = parts
    .map((p) => (p instanceof Error ? p.stack || p.message : typeof p === 'string' ? p : JSON.stringify(p)))
    .join(' ');
  process.stderr.write(`[qe-shim] ${level}: ${text}\n`);
}

module.exports = {
  debugEnabled: DEBUG,
  info: (...parts) => emit('info', parts),
  warn: (...parts) => emit('warn', parts),
  error: (...parts) => emit('error', parts),
  debug: (...parts) => {
    if (DEBUG) emit('debug', parts);
  },
};
