// Just enough of a Prisma schema (schema.prisma) for the shim: which models
// exist, the type of each of their fields (to find Json inputs and relation
// targets), and where the datasource URL comes from.
'use strict';

// Removes a `// comment` from a line, leaving `//` inside string literals alone.
function stripComment(line) {
  let inString = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '\\' && inString) i += 1;
    else if (c === '"') inString = !inString;
    else if (!inString && c === '/' && line[i + 1] === '/') return line.slice(0, i);
  }
  return line;
}

// Top-level blocks: `keyword Name { ... }`, the body as its lines.
function blocks(text) {
  const out = [];
  let current = null;
  for (const raw of text.split(/\r?\n/)) {
    const line = stripComment(raw).trim();
    if (!current) {
      const m = /^(model|enum|view|type|datasource|generator)\s+(\w+)\s*\{$/.exec(line);
      if (m) current = { keyword: m[1], name: m[2], lines: [] };
    } else if (line === '}') {
      out.push(current);
      current = null;
    } else if (line) {
      current.lines.push(line);
    }
  }
  return out;
}

// `name Type`, `name Type?`, `name Type[]`, `name Unsupported("x")?` + attributes.
function parseField(line) {
  const m = /^(\w+)\s+(\w+)(\([^)]*\))?(\[\])?(\?)?/.exec(line);
  if (!m) return null;
  return { name: m[1], type: m[2], list: !!m[4], optional: !!m[5], kind: 'scalar' };
}

function parseDatamodel(text) {
  const models = new Map();
  const enums = new Set();
  let datasource = null;
  for (const block of blocks(text)) {
    if (block.keyword === 'enum') enums.add(block.name);
    if (block.keyword === 'model' || block.keyword === 'view') {
      const fields = new Map();
      for (const line of block.lines) {
        if (line.startsWith('@@')) continue;
        const field = parseField(line);
        if (field) fields.set(field.name, field);
      }
      models.set(block.name, { name: block.name, fields });
    }
    if (block.keyword === 'datasource' && !datasource) {
      const settings = {};
      for (const line of block.lines) {
        const m = /^(\w+)\s*=\s*(.+)$/.exec(line);
        if (m) settings[m[1]] = m[2].trim();
      }
      datasource = { name: block.name, provider: unquote(settings.provider), url: urlSource(settings.url) };
    }
  }
  for (const model of models.values()) {
    for (const field of model.fields.values()) {
      if (models.has(field.type)) field.kind = 'object';
      else if (enums.has(field.type)) field.kind = 'enum';
    }
  }
  return { models, enums, datasource };
}

function unquote(s) {
  if (s === undefined) return undefined;
  const m = /^"((?:[^"\\]|\\.)*)"$/.exec(s);
  return m ? JSON.parse(`"${m[1]}"`) : s;
}

// `env("DATABASE_URL")` or a literal `"postgresql://..."`.
function urlSource(expr) {
  if (!expr) return null;
  const env = /^env\(\s*"([^"]+)"\s*\)$/.exec(expr);
  if (env) return { env: env[1] };
  return { value: unquote(expr) };
}

// The connection URL the engine should use: prisma-client-py's datasource
// override (OVERWRITE_DATASOURCES, set when the client is given a URL in
// code), else what the schema's datasource names.
function datasourceUrl(datamodel, env) {
  if (env.OVERWRITE_DATASOURCES) {
    let overrides;
    try {
      overrides = JSON.parse(env.OVERWRITE_DATASOURCES);
    } catch (e) {
      throw new Error(`OVERWRITE_DATASOURCES is not JSON: ${e.message}`);
    }
    const first = Array.isArray(overrides) ? overrides.find((d) => d && d.url) : null;
    if (first) return first.url;
  }
  const source = datamodel.datasource && datamodel.datasource.url;
  if (!source) throw new Error('the schema has no datasource url');
  if (source.value) return source.value;
  const url = env[source.env];
  if (!url) throw new Error(`${source.env} is not set (the schema's datasource url)`);
  return url;
}

module.exports = { parseDatamodel, datasourceUrl };
