// Turns one parsed prisma-client-py request (see graphql.js) into a request
// of Prisma's JSON protocol, the only protocol the WebAssembly engine speaks:
//
//   { modelName, action, query: { arguments, selection } }
//
// Two things differ between the protocols beyond their syntax:
//
// * Operation names. The GraphQL root field is the action and the model glued
//   together (`findUniqueLiteLLM_TeamTable`, `findFirstLiteLLM_TeamTableOrThrow`,
//   `aggregateX` for counts); the JSON protocol names them apart.
// * Json values. prisma-client-py sends a Json field's value as a string holding
//   the serialized JSON. The JSON protocol reads an untagged string as the JSON
//   *string* "...", so every input of a Json field has to be tagged
//   {$type: 'Json', value: '<serialized>'}. Which inputs are Json comes from the
//   schema: the walk below follows the arguments through the input types
//   (data, nested relation writes, where filters, relation filters, include
//   arguments) knowing at each step which model it is in.
'use strict';

const { parseDocument } = require('./graphql');

class UnsupportedRequest extends Error {
  constructor(message) {
    super(message);
    this.name = 'UnsupportedRequest';
    this.clientFault = true; // answered as a query error, not a shim failure
  }
}

// Longest first, so that `createManyAndReturn` is not read as `createMany` + model.
const MODEL_ACTIONS = [
  'createManyAndReturn', 'findUniqueOrThrow', 'findFirstOrThrow', 'createMany', 'updateMany',
  'deleteMany', 'findUnique', 'findFirst', 'findMany', 'createOne', 'updateOne', 'deleteOne',
  'upsertOne', 'aggregate', 'groupBy',
].sort((a, b) => b.length - a.length);
const RAW_ACTIONS = new Set(['queryRaw', 'executeRaw']);
const THROWING = { findUnique: 'findUniqueOrThrow', findFirst: 'findFirstOrThrow' };

// Json filter operators whose operand is itself a Json value.
const JSON_VALUE_FILTERS = ['equals', 'not', 'array_contains', 'array_starts_with', 'array_ends_with', 'lt', 'lte', 'gt', 'gte'];
const RELATION_FILTERS = ['is', 'isNot', 'some', 'every', 'none'];
const LOGICAL = ['AND', 'OR', 'NOT'];

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const eachOrOne = (v, fn) => (Array.isArray(v) ? v.map(fn) : fn(v));
const jsonTag = (serialized) => ({ $type: 'Json', value: serialized });
const jsonOperand = (v) => jsonTag(typeof v === 'string' ? v : JSON.stringify(v));

class Translator {
  constructor(datamodel) {
    this.dm = datamodel;
  }

  // The root field name -> {action, modelName}.
  operation(name) {
    if (RAW_ACTIONS.has(name)) return { action: name, modelName: undefined };
    for (const action of MODEL_ACTIONS) {
      if (!name.startsWith(action)) continue;
      const rest = name.slice(action.length);
      if (this.dm.models.has(rest)) return { action, modelName: rest };
      // prisma-client-py puts OrThrow after the model: findFirst<Model>OrThrow
      const base = rest.endsWith('OrThrow') ? rest.slice(0, -'OrThrow'.length) : null;
      if (base && THROWING[action] && this.dm.models.has(base)) return { action: THROWING[action], modelName: base };
    }
    throw new UnsupportedRequest(`query-engine shim: unsupported operation "${name}"`);
  }

  // GraphQL text -> {action, alias, body}: `body` is the JSON protocol request,
  // `alias` the name prisma-client-py expects the result under.
  request(text) {
    const { root } = parseDocument(text);
    const { action, modelName } = this.operation(root.name);
    const model = modelName ? this.dm.models.get(modelName) : null;
    const args = root.args || {};
    const body = {
      modelName,
      action,
      query: {
        arguments: model ? this.rootArguments(model, action, args) : args,
        selection: this.selection(model, root.selection || []),
      },
    };
    return { action, alias: root.alias, body };
  }

  selection(model, fields) {
    const out = {};
    for (const f of fields) {
      if (!f.args && !f.selection) {
        out[f.name] = true;
        continue;
      }
      const target = this.relationTarget(model, f.name);
      const entry = { selection: this.selection(target, f.selection || []) };
      if (f.args) entry.arguments = target ? this.rootArguments(target, 'findMany', f.args) : f.args;
      out[f.name] = entry;
    }
    return out;
  }

  relationTarget(model, fieldName) {
    const field = model && model.fields.get(fieldName);
    return field && field.kind === 'object' ? this.dm.models.get(field.type) : null;
  }

  rootArguments(model, action, args) {
    const out = { ...args };
    if (out.where !== undefined) out.where = this.where(model, out.where);
    if (out.data !== undefined) out.data = eachOrOne(out.data, (d) => this.data(model, d));
    if (out.create !== undefined) out.create = this.data(model, out.create);
    if (out.update !== undefined) out.update = this.data(model, out.update);
    return out;
  }

  // Create/update input of `model`.
  data(model, data) {
    if (!isObject(data)) return data;
    const out = {};
    for (const [key, value] of Object.entries(data)) {
      const field = model.fields.get(key);
      if (!field || value === null || value === undefined) out[key] = value;
      else if (field.type === 'Json') out[key] = this.jsonInput(field, value);
      else if (field.kind === 'object') out[key] = this.nestedWrite(this.dm.models.get(field.type), value);
      else out[key] = value;
    }
    return out;
  }

  jsonInput(field, value) {
    if (typeof value === 'string') return jsonTag(value);
    if (field.list && Array.isArray(value)) return value.map((v) => (typeof v === 'string' ? jsonTag(v) : v));
    if (isObject(value)) {
      // {set: ...} (and push for Json lists)
      const out = { ...value };
      for (const op of ['set', 'push']) {
        if (typeof out[op] === 'string') out[op] = jsonTag(out[op]);
        else if (Array.isArray(out[op])) out[op] = out[op].map((v) => (typeof v === 'string' ? jsonTag(v) : v));
      }
      return out;
    }
    return value;
  }

  // Nested writes through a relation field into `target`.
  nestedWrite(target, ops) {
    if (!isObject(ops)) return ops;
    const out = {};
    for (const [op, value] of Object.entries(ops)) {
      switch (op) {
        case 'create':
          out[op] = eachOrOne(value, (d) => this.data(target, d));
          break;
        case 'createMany':
          out[op] = isObject(value) ? { ...value, data: eachOrOne(value.data, (d) => this.data(target, d)) } : value;
          break;
        case 'connectOrCreate':
          out[op] = eachOrOne(value, (v) => ({ ...v, where: this.where(target, v.where), create: this.data(target, v.create) }));
          break;
        case 'upsert':
          out[op] = eachOrOne(value, (v) => {
            const u = { ...v, create: this.data(target, v.create), update: this.data(target, v.update) };
            if (v.where !== undefined) u.where = this.where(target, v.where);
            return u;
          });
          break;
        case 'update':
          out[op] = eachOrOne(value, (v) => (this.isWhereData(target, v)
            ? { ...v, where: this.where(target, v.where), data: this.data(target, v.data) }
            : this.data(target, v)));
          break;
        case 'updateMany':
          out[op] = eachOrOne(value, (v) => ({ ...v, where: this.where(target, v.where), data: this.data(target, v.data) }));
          break;
        case 'deleteMany':
        case 'delete':
        case 'connect':
        case 'disconnect':
        case 'set':
          out[op] = eachOrOne(value, (v) => (isObject(v) ? this.where(target, v) : v));
          break;
        default:
          out[op] = value;
      }
    }
    return out;
  }

  // `{where, data}` (a to-many update, or a filtered to-one update) rather than
  // plain update data: only those two keys, and `data` is not a field.
  isWhereData(model, v) {
    return isObject(v) && 'data' in v && !model.fields.has('data')
      && Object.keys(v).every((k) => k === 'where' || k === 'data');
  }

  // A where filter of `model`.
  where(model, where) {
    if (Array.isArray(where)) return where.map((w) => this.where(model, w));
    if (!isObject(where)) return where;
    const out = {};
    for (const [key, value] of Object.entries(where)) {
      const field = model.fields.get(key);
      if (LOGICAL.includes(key)) out[key] = this.where(model, value);
      else if (!field || value === null || value === undefined) out[key] = value;
      else if (field.type === 'Json') out[key] = this.jsonFilter(value);
      else if (field.kind === 'object') out[key] = this.relationFilter(this.dm.models.get(field.type), value);
      else out[key] = value;
    }
    return out;
  }

  jsonFilter(filter) {
    if (!isObject(filter)) return jsonOperand(filter); // shorthand for equals
    const out = { ...filter };
    for (const op of JSON_VALUE_FILTERS) {
      if (out[op] !== undefined && out[op] !== null) out[op] = jsonOperand(out[op]);
    }
    return out;
  }

  relationFilter(target, filter) {
    if (!isObject(filter)) return filter;
    const keys = Object.keys(filter);
    if (keys.length && keys.every((k) => RELATION_FILTERS.includes(k))) {
      const out = {};
      for (const k of keys) out[k] = this.where(target, filter[k]);
      return out;
    }
    return this.where(target, filter); // to-one shorthand: the filter itself
  }
}

module.exports = { Translator, UnsupportedRequest };
