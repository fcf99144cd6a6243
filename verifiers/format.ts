import { Validator, type OutputUnit } from '@cfworker/json-schema';
import { z } from 'zod';
import type { SlotSequence, ToolCall, ToolSpec, Verdict } from '../core/model.js';

/**
 * Format check of a tool-call sequence (docs/TOOLS.md, "Calls, labels, references"):
 * `format:schema` (not a sequence of labelled calls), `format:duplicate_label`,
 * `format:unknown_tool`, `format:arguments` (the JSON-schema violation), `format:reference`,
 * `format:answer`. Success: category `format_ok`.
 */

export const LABEL_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** `$LABEL$` (whole output) or `$LABEL.key$` (a column; keys may hold spaces and punctuation). */
const REFERENCE_PATTERN = /^\$([A-Za-z_][A-Za-z0-9_]*)(?:\.([^$]+))?\$$/;
const INIT_TOOL = 'initialize_active_data';

const callSchema = z.object({
  name: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()),
  label: z.string().regex(LABEL_PATTERN, 'a label must match ^[A-Za-z_][A-Za-z0-9_]*$'),
});

const sequenceSchema = z.object({
  initialization: z.array(callSchema),
  calls: z.array(callSchema),
  answerLabels: z.array(z.string()),
});

/** initialize_active_data is not a model-visible tool: its arguments are checked here. */
const initArgumentsSchema = z
  .object({
    database: z.string().min(1),
    tables: z.array(z.object({ alias: z.string().min(1), table: z.string().min(1) }).strict()).min(1),
    joins: z.array(
      z
        .object({
          type: z.enum(['inner', 'left']),
          alias: z.string().min(1),
          on: z.array(z.object({ left: z.string().min(1), right: z.string().min(1) }).strict()).min(1),
        })
        .strict(),
    ),
  })
  .strict()
  .refine((args) => args.joins.length === args.tables.length - 1, {
    message: 'joins[i] joins tables[i+1]: there must be one join per table after the first',
  })
  .refine((args) => args.joins.every((join, i) => join.alias === args.tables[i + 1].alias), {
    message: 'joins[i].alias must name tables[i+1]',
  });

function fail(category: string, message: string): Verdict {
  return { ok: false, category, message };
}

function zodMessage(error: z.ZodError): string {
  const issue = error.issues[0];
  // A path may hold a symbol (a symbol key zod refused), which join() cannot write.
  const where = issue.path.length ? issue.path.map(String).join('.') : '(root)';
  return `${where}: ${issue.message}`;
}

/**
 * The sequence as `sequenceSchema` reads it, or its first issue. A run checks thousands of
 * sequences (every sample, on every variant), and zod copies every call it checks: a shape
 * this plain reading is sure zod accepts is taken as it is, anything else goes to zod, whose
 * verdict (and message) stands.
 */
function sequenceShape(
  seq: unknown,
):
  | { ok: true; value: Pick<SlotSequence, 'initialization' | 'calls' | 'answerLabels'> }
  | { ok: false; message: string } {
  if (isPlainSequence(seq)) return { ok: true, value: seq };
  const parsed = sequenceSchema.safeParse(seq);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, message: zodMessage(parsed.error) };
}

/** What `sequenceSchema` surely accepts (arrays read by index: a hole is no call). */
function isPlainSequence(seq: unknown): seq is Pick<SlotSequence, 'initialization' | 'calls' | 'answerLabels'> {
  if (!isObject(seq)) return false;
  const { initialization, calls, answerLabels } = seq as Record<string, unknown>;
  return everyItem(initialization, isPlainCall) && everyItem(calls, isPlainCall) && everyItem(answerLabels, isString);
}

function isPlainCall(call: unknown): boolean {
  if (!isObject(call)) return false;
  const { name, arguments: args, label } = call as Record<string, unknown>;
  return isString(name) && name.length > 0 && isString(label) && LABEL_PATTERN.test(label) && isPlainRecord(args);
}

/** zod's record: a plain object (its prototype Object's or none), no symbol keys. */
function isPlainRecord(value: unknown): boolean {
  if (!isObject(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return (prototype === Object.prototype || prototype === null) && Object.getOwnPropertySymbols(value).length === 0;
}

const isObject = (value: unknown): value is object =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isString = (value: unknown): value is string => typeof value === 'string';

function everyItem(list: unknown, test: (item: unknown) => boolean): boolean {
  if (!Array.isArray(list)) return false;
  for (let i = 0; i < list.length; i++) if (!test(list[i])) return false;
  return true;
}

// ---------------------------------------------------------------- argument validators

/**
 * Argument validators. An interpreting JSON-schema validator, not a compiling one: every
 * instance's tool list carries its own key enums, so specs rarely repeat and compiling each
 * (ajv) cost more than all the SQL of a run. Validators are kept per spec object (the tool
 * registry shares specs between instances) and per tool list.
 */
const byList = new WeakMap<ToolSpec[], Map<string, ToolSpec>>();
const bySpec = new WeakMap<ToolSpec, Validator>();

function toolsByName(tools: ToolSpec[]): Map<string, ToolSpec> {
  let specs = byList.get(tools);
  if (!specs) {
    specs = new Map(tools.map((t) => [t.function.name, t]));
    byList.set(tools, specs);
  }
  return specs;
}

function validatorFor(spec: ToolSpec): Validator {
  let validator = bySpec.get(spec);
  if (!validator) {
    validator = new Validator(spec.function.parameters, '2020-12', false);
    bySpec.set(spec, validator);
  }
  return validator;
}

function isReference(value: unknown): value is string {
  return typeof value === 'string' && REFERENCE_PATTERN.test(value);
}

/** The value at an instance location (`#/a/0/b`, JSON-pointer escaped). */
function valueAt(root: unknown, location: string): unknown {
  let value = root;
  for (const raw of location.split('/').slice(1)) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** Errors that only say "a child failed": the child's own error says what. */
const WRAPPERS = new Set(['properties', 'items', 'prefixItems', 'allOf', '$ref', 'false']);
/**
 * A `$LABEL$` stands for an output of any kind, whose type the schema cannot know: type-like
 * errors reported exactly at a reference are not format errors (execution checks them).
 */
const TYPE_LIKE = new Set(['type', 'anyOf', 'oneOf', 'format', 'pattern', 'minLength', 'maxLength']);

function realErrors(errors: readonly OutputUnit[], args: unknown): OutputUnit[] {
  return errors.filter(
    (e) => !WRAPPERS.has(e.keyword) && !(TYPE_LIKE.has(e.keyword) && isReference(valueAt(args, e.instanceLocation))),
  );
}

function errorMessage(error: OutputUnit, args: unknown): string {
  const where = error.instanceLocation === '#' ? '(arguments)' : error.instanceLocation.slice(2).replace(/\//g, '.');
  if (error.keyword === 'enum') {
    return `${where}: ${JSON.stringify(valueAt(args, error.instanceLocation))} is not one of the allowed values`;
  }
  const unknown = error.keyword === 'additionalProperties' ? /Property "(.*)" does not match/.exec(error.error) : null;
  if (unknown) return `${where}: unknown argument "${unknown[1]}"`;
  return `${where}: ${error.error.replace(/^Instance /, '')}`;
}

// ---------------------------------------------------------------- references

/** Every `$LABEL$` / `$LABEL.key$` string anywhere in a value, with its path. */
function references(value: unknown, path: string, out: { path: string; label: string }[] = []) {
  if (typeof value === 'string') {
    const m = REFERENCE_PATTERN.exec(value);
    if (m) out.push({ path, label: m[1] });
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => references(v, `${path}[${i}]`, out));
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) references(v, `${path}.${k}`, out);
  }
  return out;
}

// ---------------------------------------------------------------- the check

function checkInitialization(call: ToolCall): Verdict | undefined {
  if (call.name !== INIT_TOOL) {
    return fail('format:unknown_tool', `initialization call ${call.label} is ${call.name}, not ${INIT_TOOL}`);
  }
  const parsed = initArgumentsSchema.safeParse(call.arguments);
  if (!parsed.success) return fail('format:arguments', `${call.label} (${INIT_TOOL}): ${zodMessage(parsed.error)}`);
  return undefined;
}

function checkCall(call: ToolCall, specs: Map<string, ToolSpec>, earlier: Set<string>): Verdict | undefined {
  const spec = specs.get(call.name);
  if (!spec) return fail('format:unknown_tool', `${call.label}: no tool named ${call.name}`);
  const result = validatorFor(spec).validate(call.arguments);
  if (!result.valid) {
    const errors = realErrors(result.errors, call.arguments);
    if (errors.length)
      return fail('format:arguments', `${call.label} (${call.name}): ${errorMessage(errors[0], call.arguments)}`);
  }
  for (const ref of references(call.arguments, 'arguments')) {
    if (!earlier.has(ref.label)) {
      return fail(
        'format:reference',
        `${call.label}: ${ref.path} refers to ${ref.label}, which is not an earlier call`,
      );
    }
  }
  return undefined;
}

export function checkFormat(seq: SlotSequence, tools: ToolSpec[]): Verdict {
  const shaped = sequenceShape(seq);
  if (!shaped.ok) return fail('format:schema', shaped.message);
  const { initialization, calls, answerLabels } = shaped.value;

  const seen = new Set<string>();
  for (const call of [...initialization, ...calls]) {
    if (seen.has(call.label)) return fail('format:duplicate_label', `label ${call.label} is used twice`);
    seen.add(call.label);
  }

  const earlier = new Set<string>();
  for (const call of initialization) {
    const bad = checkInitialization(call);
    if (bad) return bad;
    earlier.add(call.label);
  }
  const specs = toolsByName(tools);
  for (const call of calls) {
    const bad = checkCall(call, specs, earlier);
    if (bad) return bad;
    earlier.add(call.label);
  }

  if (answerLabels.length === 0) return fail('format:answer', 'no answer labels');
  const missing = answerLabels.find((label) => !earlier.has(label));
  if (missing !== undefined) return fail('format:answer', `answer label ${missing} is not a call label`);
  return { ok: true, category: 'format_ok', message: `${initialization.length} initialization, ${calls.length} calls` };
}
