/**
 * Validates real responses against an OpenAPI 3.1 document: finds the operation by
 * matching the concrete path against the templated paths, finds the response for the
 * status (or `default`), and validates JSON bodies with Ajv (JSON Schema 2020-12, the
 * OpenAPI 3.1 dialect). Markdown and text bodies are checked for a documented media type.
 *
 * Two rules come from the document's own prose: a method not documented on a path is
 * valid only as that path's documented 405, and a path not in the document is valid only
 * as 404 ROUTE_NOT_FOUND in the error envelope.
 */
import Ajv2020Import from 'ajv/dist/2020.js';
import addFormatsImport from 'ajv-formats';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';

type Json = Record<string, unknown>;

// Both are CommonJS modules whose module.exports is the class / plugin itself and also
// carries it as `.default`; TypeScript (NodeNext) types the default import as the latter.
const Ajv2020 = (Ajv2020Import as unknown as { default: typeof Ajv2020Import.default }).default;
const addFormats = (addFormatsImport as unknown as { default: typeof addFormatsImport.default }).default;

const BASE = 'urn:polyphony:openapi';
const COMPONENT_PREFIX = '#/components/schemas/';
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export interface OpenApiValidator {
  /** Problems with the response; an empty array means it matches the document. */
  validate(method: string, path: string, status: number, body: unknown, contentType?: string, headers?: Record<string, unknown>): string[];
  /** Compiles every schema of the document (components, parameters, bodies, responses) and resolves every $ref. */
  schemaProblems(): string[];
}

interface PathEntry {
  template: string;
  regex: RegExp;
  params: number;
  literalLength: number;
  item: Json;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Deep copy with component $refs pointed at the Ajv root schema that holds the components. */
function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (!isObject(value)) return value;
  const out: Json = {};
  for (const [key, inner] of Object.entries(value)) {
    if (key === '$ref' && typeof inner === 'string' && inner.startsWith(COMPONENT_PREFIX)) {
      out[key] = `${BASE}#/$defs/${inner.slice(COMPONENT_PREFIX.length)}`;
    } else {
      out[key] = rewriteRefs(inner);
    }
  }
  return out;
}

function pathEntry(template: string, item: Json): PathEntry {
  let pattern = '';
  let params = 0;
  let literalLength = 0;
  for (const part of template.split(/(\{[^}]+\})/)) {
    if (/^\{[^}]+\}$/.test(part)) {
      pattern += '([^/]+)';
      params++;
    } else {
      pattern += part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      literalLength += part.length;
    }
  }
  return { template, regex: new RegExp(`^${pattern}$`), params, literalLength, item };
}

function formatError(error: ErrorObject): string {
  const where = error.instancePath || '(root)';
  const params = error.params as Record<string, unknown>;
  const extra =
    params.additionalProperty !== undefined
      ? ` "${String(params.additionalProperty)}"`
      : params.allowedValues !== undefined
        ? ` ${JSON.stringify(params.allowedValues)}`
        : '';
  return `${where} ${error.message ?? 'is invalid'}${extra}`;
}

function mediaTypeOf(contentType: string | undefined): string {
  return (contentType ?? 'application/json').split(';')[0]!.trim().toLowerCase();
}

function isJsonMediaType(mediaType: string): boolean {
  return mediaType === 'application/json' || mediaType.endsWith('+json');
}

function findMedia(content: Json, mediaType: string): Json | undefined {
  if (isObject(content[mediaType])) return content[mediaType] as Json;
  const [type] = mediaType.split('/');
  const wildcard = content[`${type}/*`] ?? content['*/*'];
  return isObject(wildcard) ? wildcard : undefined;
}

function isEmptyBody(body: unknown): boolean {
  return body === undefined || body === null || body === '' || (isObject(body) && Object.keys(body).length === 0);
}

export function createOpenApiValidator(document: object): OpenApiValidator {
  const doc = document as Json;
  const components = isObject(doc.components) && isObject((doc.components as Json).schemas) ? ((doc.components as Json).schemas as Json) : {};
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  addFormats(ajv);
  ajv.addSchema({ $id: BASE, $defs: rewriteRefs(components) as Json });

  const entries = Object.entries(isObject(doc.paths) ? (doc.paths as Json) : {})
    .filter((entry): entry is [string, Json] => isObject(entry[1]))
    .map(([template, item]) => pathEntry(template, item))
    // Literal paths first, then the most specific templates.
    .sort((a, b) => a.params - b.params || b.literalLength - a.literalLength);

  const compiled = new WeakMap<object, ValidateFunction>();
  function validatorFor(schema: Json): ValidateFunction {
    let validate = compiled.get(schema);
    if (!validate) {
      validate = ajv.compile(rewriteRefs(schema) as Json);
      compiled.set(schema, validate);
    }
    return validate;
  }

  function check(schema: Json, body: unknown, label: string): string[] {
    let validate: ValidateFunction;
    try {
      validate = validatorFor(schema);
    } catch (error) {
      return [`${label}: the documented schema does not compile: ${(error as Error).message}`];
    }
    if (validate(body)) return [];
    const errors = (validate.errors ?? []).map((error) => `${label}: ${formatError(error)}`);
    return errors.length > 25 ? [...errors.slice(0, 25), `${label}: … ${errors.length - 25} more`] : errors;
  }

  function validate(method: string, rawPath: string, status: number, body: unknown, contentType?: string, headers?: Record<string, unknown>): string[] {
    const path = rawPath.split(/[?#]/)[0]!;
    const verb = method.toLowerCase();
    const label = `${method.toUpperCase()} ${path} → ${status}`;
    const entry = entries.find((candidate) => candidate.regex.test(path));

    if (!entry) {
      const envelope = components.ErrorEnvelope;
      if (status !== 404 || !isObject(envelope)) return [`${label}: no documented path matches ${path}`];
      const problems = check({ $ref: `${COMPONENT_PREFIX}ErrorEnvelope` }, body, label);
      const code = isObject(body) && isObject(body.error) ? body.error.code : undefined;
      if (code !== 'ROUTE_NOT_FOUND') problems.push(`${label}: an undocumented path may only answer 404 ROUTE_NOT_FOUND, got ${String(code)}`);
      return problems;
    }

    const operationVerb = verb === 'head' && !isObject(entry.item.head) ? 'get' : verb;
    let operation = isObject(entry.item[operationVerb]) ? (entry.item[operationVerb] as Json) : undefined;
    if (!operation) {
      const documented = METHODS.filter((candidate) => isObject(entry.item[candidate]));
      // A method the path does not list is answered by the path's documented 405.
      const with405 = documented
        .map((candidate) => entry.item[candidate] as Json)
        .find((candidate) => isObject(candidate.responses) && isObject((candidate.responses as Json)['405']));
      if (status !== 405 || !with405) {
        return [
          `${label}: ${method.toUpperCase()} is not documented on ${entry.template} (documented: ${documented.map((name) => name.toUpperCase()).join(', ') || 'none'})`,
        ];
      }
      operation = with405;
    }

    const responses = isObject(operation.responses) ? (operation.responses as Json) : {};
    const response = responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
    if (!isObject(response)) {
      return [`${label}: status ${status} is not documented for ${method.toUpperCase()} ${entry.template} (documented: ${Object.keys(responses).join(', ')})`];
    }

    const problems: string[] = [];
    if (headers && isObject(response.headers)) {
      const present = new Set(Object.keys(headers).map((name) => name.toLowerCase()));
      for (const [name, header] of Object.entries(response.headers)) {
        if (isObject(header) && header.required === true && !present.has(name.toLowerCase())) problems.push(`${label}: required header ${name} is missing`);
      }
    }

    if (!isObject(response.content)) {
      if (!isEmptyBody(body) && verb !== 'head') problems.push(`${label}: the document describes no body, but one was sent`);
      return problems;
    }
    const mediaType = mediaTypeOf(contentType);
    const media = findMedia(response.content, mediaType);
    if (!media) {
      problems.push(`${label}: content type ${mediaType} is not documented (documented: ${Object.keys(response.content).join(', ')})`);
      return problems;
    }
    if (verb === 'head' || !isJsonMediaType(mediaType) || !isObject(media.schema)) return problems;
    return [...problems, ...check(media.schema, body, label)];
  }

  function schemaProblems(): string[] {
    const problems: string[] = [];
    for (const name of Object.keys(components)) {
      try {
        ajv.compile({ $ref: `${BASE}#/$defs/${name}` });
      } catch (error) {
        problems.push(`components.schemas.${name}: ${(error as Error).message}`);
      }
    }
    const schemas: { where: string; schema: Json }[] = [];
    for (const entry of entries) {
      for (const verb of METHODS) {
        const operation = entry.item[verb];
        if (!isObject(operation)) continue;
        const where = `${verb.toUpperCase()} ${entry.template}`;
        for (const parameter of Array.isArray(operation.parameters) ? operation.parameters : []) {
          if (isObject(parameter) && isObject(parameter.schema))
            schemas.push({ where: `${where} parameter ${String(parameter.name)}`, schema: parameter.schema });
        }
        const requestBody = operation.requestBody;
        if (isObject(requestBody) && isObject(requestBody.content)) {
          for (const [type, media] of Object.entries(requestBody.content)) {
            if (isObject(media) && isObject(media.schema)) schemas.push({ where: `${where} request ${type}`, schema: media.schema });
          }
        }
        for (const [status, response] of Object.entries(isObject(operation.responses) ? operation.responses : {})) {
          if (!isObject(response) || !isObject(response.content)) continue;
          for (const [type, media] of Object.entries(response.content)) {
            if (isObject(media) && isObject(media.schema)) schemas.push({ where: `${where} ${status} ${type}`, schema: media.schema });
          }
        }
      }
    }
    for (const { where, schema } of schemas) {
      try {
        validatorFor(schema);
      } catch (error) {
        problems.push(`${where}: ${(error as Error).message}`);
      }
    }
    const walk = (value: unknown, at: string) => {
      if (Array.isArray(value)) value.forEach((inner, index) => walk(inner, `${at}/${index}`));
      else if (isObject(value)) {
        for (const [key, inner] of Object.entries(value)) {
          if (key === '$ref' && typeof inner === 'string') {
            if (!inner.startsWith(COMPONENT_PREFIX) || !(inner.slice(COMPONENT_PREFIX.length) in components)) problems.push(`${at}: unresolved $ref ${inner}`);
          } else walk(inner, `${at}/${key}`);
        }
      }
    };
    walk(doc, '#');
    return problems;
  }

  return { validate, schemaProblems };
}

/** The parts of a supertest response the check reads. */
export interface ResponseLike {
  status: number;
  headers: Record<string, unknown>;
  body?: unknown;
  text?: string;
}

/** Throws an Error listing every way the response disagrees with the document. */
export function assertMatchesOpenApi(validator: OpenApiValidator, method: string, path: string, response: ResponseLike): void {
  const contentType = typeof response.headers['content-type'] === 'string' ? response.headers['content-type'] : undefined;
  const json = contentType === undefined || isJsonMediaType(mediaTypeOf(contentType));
  const body = json ? response.body : response.text;
  const problems = validator.validate(method, path, response.status, body, contentType, response.headers);
  if (problems.length > 0) {
    throw new Error(`${method.toUpperCase()} ${path} does not match /openapi.json:\n  ${problems.join('\n  ')}`);
  }
}
