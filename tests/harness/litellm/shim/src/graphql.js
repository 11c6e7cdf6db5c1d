// A parser for the GraphQL documents prisma-client-py 0.11 sends to the query
// engine. They are a small, regular subset of GraphQL:
//
//   mutation {
//     result: updateOneLiteLLM_TeamTable
//     (
//       where: { team_id: "t-1" }
//       data: { metadata: "{\"a\": 1}", models: ["gpt-4"], spend: { increment: 0.5 } }
//     )
//     {
//       team_id
//       litellm_model_table { id }
//       members(where: { user_id: { in: ["u"] } })
//       { user_id }
//     }
//   }
//
// One root field per document, no variables, fragments or directives.
// Every scalar argument value is written by Python's json.dumps, so strings
// use JSON escapes and numbers JSON syntax. json.dumps also writes NaN,
// Infinity and -Infinity for such floats; neither GraphQL nor the JSON protocol
// has them, so they are refused with a clear error. Commas are insignificant,
// as in GraphQL.
//
// parseDocument(text) returns
//   { operation: 'query' | 'mutation', root: Field }
//   Field = { alias: string | null, name: string, args: object | null, selection: Field[] | null }
// Argument values become plain JavaScript values; integers beyond 2^53 become
// BigIntLiteral (so no digit is lost), enum-like bare words become strings.
'use strict';

class GraphqlSyntaxError extends Error {
  constructor(message, source, pos) {
    const line = source.slice(0, pos).split('\n').length;
    super(`GraphQL request: ${message} (line ${line})`);
    this.name = 'GraphqlSyntaxError';
    this.clientFault = true; // answered as a query error, not a shim failure
  }
}

// An integer literal too large for a JavaScript number. Serialized as the
// JSON protocol's BigInt value.
class BigIntLiteral {
  constructor(text) {
    this.text = text;
  }
  toJSON() {
    return { $type: 'BigInt', value: this.text };
  }
}

const NAME_START = /[_A-Za-z]/;
const NAME_REST = /[_0-9A-Za-z]/;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const PUNCTUATORS = new Set(['{', '}', '(', ')', '[', ']', ':']);

// Splits the document into tokens: {type: 'punct'|'name'|'string'|'number', text, pos}.
function tokenize(src) {
  const tokens = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === ',' || c === '\ufeff') {
      i += 1;
    } else if (c === '#') {
      while (i < src.length && src[i] !== '\n') i += 1;
    } else if (PUNCTUATORS.has(c)) {
      tokens.push({ type: 'punct', text: c, pos: i });
      i += 1;
    } else if (c === '"') {
      const start = i;
      i += 1;
      while (i < src.length && src[i] !== '"') i += src[i] === '\\' ? 2 : 1;
      if (i >= src.length) throw new GraphqlSyntaxError('unterminated string', src, start);
      i += 1;
      tokens.push({ type: 'string', text: src.slice(start, i), pos: start });
    } else if (c === '-' && src.startsWith('-Infinity', i)) {
      throw new GraphqlSyntaxError('-Infinity cannot be sent to the query engine', src, i);
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      NUMBER.lastIndex = i;
      const m = NUMBER.exec(src);
      if (!m) throw new GraphqlSyntaxError(`bad number`, src, i);
      tokens.push({ type: 'number', text: m[0], pos: i });
      i += m[0].length;
    } else if (NAME_START.test(c)) {
      const start = i;
      while (i < src.length && NAME_REST.test(src[i])) i += 1;
      tokens.push({ type: 'name', text: src.slice(start, i), pos: start });
    } else {
      throw new GraphqlSyntaxError(`unexpected character ${JSON.stringify(c)}`, src, i);
    }
  }
  return tokens;
}

function numberValue(text) {
  if (/^-?[0-9]+$/.test(text)) {
    const n = Number(text);
    return Number.isSafeInteger(n) ? n : new BigIntLiteral(text);
  }
  return Number(text);
}

class Parser {
  constructor(src) {
    this.src = src;
    this.tokens = tokenize(src);
    this.at = 0;
  }

  peek() {
    return this.tokens[this.at];
  }

  fail(message, token = this.peek()) {
    throw new GraphqlSyntaxError(message, this.src, token ? token.pos : this.src.length);
  }

  next() {
    const t = this.tokens[this.at];
    if (!t) this.fail('unexpected end of document');
    this.at += 1;
    return t;
  }

  isPunct(text) {
    const t = this.peek();
    return !!t && t.type === 'punct' && t.text === text;
  }

  expectPunct(text) {
    const t = this.next();
    if (t.type !== 'punct' || t.text !== text) this.fail(`expected "${text}", found ${JSON.stringify(t.text)}`, t);
  }

  name() {
    const t = this.next();
    if (t.type !== 'name') this.fail(`expected a name, found ${JSON.stringify(t.text)}`, t);
    return t.text;
  }

  document() {
    let operation = 'query';
    const first = this.peek();
    if (first && first.type === 'name') {
      operation = this.name();
      if (operation !== 'query' && operation !== 'mutation') this.fail(`unsupported operation type "${operation}"`, first);
      if (this.peek() && this.peek().type === 'name') this.name(); // optional operation name
    }
    this.expectPunct('{');
    const root = this.field();
    if (!this.isPunct('}')) this.fail('only one root field per request is supported');
    this.expectPunct('}');
    if (this.peek()) this.fail('unexpected content after the operation');
    return { operation, root };
  }

  field() {
    let alias = null;
    let name = this.name();
    if (this.isPunct(':')) {
      this.next();
      alias = name;
      name = this.name();
    }
    const args = this.isPunct('(') ? this.arguments() : null;
    const selection = this.isPunct('{') ? this.selectionSet() : null;
    return { alias, name, args, selection };
  }

  arguments() {
    this.expectPunct('(');
    const args = this.objectFields(')');
    return args;
  }

  selectionSet() {
    this.expectPunct('{');
    const fields = [];
    while (!this.isPunct('}')) fields.push(this.field());
    this.next();
    return fields;
  }

  // `name: value` pairs up to the closing punctuator.
  objectFields(close) {
    const out = {};
    while (!this.isPunct(close)) {
      const keyToken = this.peek();
      const key = this.name();
      if (key === '__proto__') this.fail('"__proto__" is not accepted as a key', keyToken);
      if (Object.prototype.hasOwnProperty.call(out, key)) this.fail(`duplicate key "${key}"`, keyToken);
      this.expectPunct(':');
      out[key] = this.value();
    }
    this.next();
    return out;
  }

  value() {
    const t = this.next();
    switch (t.type) {
      case 'string':
        try {
          return JSON.parse(t.text);
        } catch (e) {
          return this.fail(`bad string literal (${e.message})`, t);
        }
      case 'number':
        return numberValue(t.text);
      case 'name':
        if (t.text === 'true') return true;
        if (t.text === 'false') return false;
        if (t.text === 'null') return null;
        if (t.text === 'NaN' || t.text === 'Infinity') return this.fail(`${t.text} cannot be sent to the query engine`, t);
        return t.text; // enum value (sort order, query mode, ...)
      case 'punct':
        if (t.text === '{') return this.objectFields('}');
        if (t.text === '[') {
          const list = [];
          while (!this.isPunct(']')) list.push(this.value());
          this.next();
          return list;
        }
        return this.fail(`unexpected ${JSON.stringify(t.text)}`, t);
      default:
        return this.fail(`unexpected token ${JSON.stringify(t.text)}`, t);
    }
  }
}

function parseDocument(text) {
  if (typeof text !== 'string') throw new GraphqlSyntaxError('the query is not a string', '', 0);
  return new Parser(text).document();
}

module.exports = { parseDocument, BigIntLiteral, GraphqlSyntaxError };
