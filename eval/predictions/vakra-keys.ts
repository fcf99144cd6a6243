import type { EvalItem } from '../dataset.js';
import { keyContextOf, keyEnums, KEY_ARGUMENTS, publishedKeyName } from './published-names.js';

/**
 * VAKRA's runner records keys as VAKRA's server names a sample's columns (export/published/
 * names.ts: bare for one unaliased table, `make_safe`d, a table's second alias `<table>_1`):
 * once the record's item is known, its calls are put in nl2api's keys, as `nl2api mcp
 * --protocol vakra` does for a live agent. A key the item does not have passes as written
 * (the runtime refuses it, as it would any unknown key).
 */
export function withNl2apiKeys(calls: readonly unknown[], item: EvalItem): unknown[] {
  const names = nl2apiKeysByVakraName(item);
  if (names.size === 0) return [...calls];
  // VAKRA's transform rewrites its column in place; nl2api's adds `<key>_<operation>`, which later calls read.
  const transformed = new Map<string, string>();
  const key = (value: unknown) =>
    typeof value === 'string' ? (transformed.get(value) ?? names.get(value) ?? value) : value;
  const getters = getterNames(item, names);
  return calls.map((call) => (isCall(call) ? renamed(call) : call));

  function renamed(call: Call): Call {
    const operation =
      TRANSFORM.exec(call.name)?.[1] ?? (call.name === 'transform_data' ? call.arguments.operation_type : undefined);
    const result = {
      ...call,
      name: getters.get(call.name) ?? call.name,
      arguments: Object.fromEntries(
        Object.entries(call.arguments).map(([field, value]) => [
          field,
          KEY_ARGUMENTS.has(field) ? (Array.isArray(value) ? value.map(key) : key(value)) : value,
        ]),
      ),
    };
    const original = result.arguments.key_name;
    if (typeof operation === 'string' && typeof original === 'string')
      transformed.set(String(call.arguments.key_name), `${original}_${operation}`);
    return result;
  }
}

/** nl2api's SEL transform tools (the VAKRA reader's names for VAKRA's `transform_data_to_<op>`). */
const TRANSFORM = /^transform_data_(substring|abs|datetime)$/;

/** A call as the VAKRA reader writes one (vakra.ts). */
interface Call {
  name: string;
  arguments: Record<string, unknown>;
}

const isCall = (value: unknown): value is Call =>
  typeof (value as Partial<Call> | null)?.name === 'string' &&
  typeof (value as Partial<Call>).arguments === 'object' &&
  (value as Partial<Call>).arguments !== null;

/** Each key the item's tools name, under VAKRA's name for it in the item's starting table (first name wins). */
function nl2apiKeysByVakraName(item: EvalItem): Map<string, string> {
  const [init] = item.initialization;
  if (!init) return new Map();
  const context = keyContextOf(init);
  const keys = [
    ...keyEnums(item.tools.map((tool) => tool.function.parameters)),
    ...Object.values(item.bindings ?? {}).flatMap(({ boundArguments }) =>
      typeof boundArguments.key_name === 'string' ? [boundArguments.key_name] : [],
    ),
  ];
  const names = new Map<string, string>();
  for (const key of keys) {
    const vakra = publishedKeyName(key, context);
    if (!names.has(vakra)) names.set(vakra, key);
  }
  return names;
}

/** SEL: a getter as the VAKRA reader names it (`get_<VAKRA key>`) → the item's getter tool of that key. */
function getterNames(item: EvalItem, names: ReadonlyMap<string, string>): Map<string, string> {
  const byKey = new Map(
    Object.entries(item.bindings ?? {}).flatMap(([tool, { slotTool, boundArguments }]) =>
      slotTool === 'retrieve_data' && typeof boundArguments.key_name === 'string'
        ? [[boundArguments.key_name, tool] as const]
        : [],
    ),
  );
  const getters = new Map<string, string>();
  for (const [vakra, key] of names) {
    const tool = byKey.get(key);
    if (tool !== undefined && `get_${vakra}` !== tool) getters.set(`get_${vakra}`, tool);
  }
  return getters;
}
