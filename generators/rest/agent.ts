import { z } from 'zod';
import type { LlmClient } from '../llm/client.js';
import type { LlmReplyFailure } from '../llm/errors.js';
import type { LlmMessage } from '../llm/messages.js';
import { completeStructured, failureFeedback } from '../llm/structured.js';
import type { ColumnInfo, DatabaseInfo, Instance, TableInfo } from '../../core/model.js';
import { accept, reject, type Outcome } from '../../core/outcome.js';
import { clip, endpointPath, truncateIdentifier } from './naming.js';
import { loadPrompt, type PromptTemplate } from './prompts.js';
import {
  EndpointSpecSchema,
  type ArgumentValue,
  type EndpointSpec,
  type SynthesizedEndpoint,
} from '../../runtime/rest/spec.js';
import type { FailedAttempt, SynthesisRequest, Synthesizer } from './synthesis.js';

/**
 * The LLM code-generation agent of rest.synthesize (issue 3): instances of one database,
 * a few per call, with the schema and its column descriptions → one endpoint spec and call
 * per instance. The reply is data: parsed, trimmed and shape-checked here, never executed;
 * the format check and everything after it run in the pipeline's verify-and-retry loop,
 * whose failures come back in `request.previous` and are replayed to the model as a
 * conversation about that one instance.
 */

export interface LlmSynthesizerOptions {
  /** Instances per model call on a first attempt (default 4); a retried instance goes alone. */
  batchSize?: number;
  /** `<provider>/<model>` (mistral/mistral-large-latest): the synthesizer's name, recorded with each sample. */
  providerLabel: string;
}

export function createLlmSynthesizer(client: LlmClient, options: LlmSynthesizerOptions): Synthesizer {
  const batchSize = options.batchSize ?? 4;
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new Error(`batchSize must be a positive integer, got ${batchSize}`);
  const prompt = loadPrompt('rest-synthesize');
  return {
    name: `llm:${options.providerLabel}`,
    fingerprint: {
      system: prompt.system,
      user: prompt.user,
      outputFormat: OUTPUT_FORMAT,
      providerLabel: options.providerLabel,
      batchSize,
    },
    async synthesize(requests, db, datasetName) {
      const outcomes = new Array<Outcome<SynthesizedEndpoint>>(requests.length);
      const schema = schemaBlock(db);
      await Promise.all(
        batches(requests, batchSize).map(async (indices) => {
          const batch = indices.map((i) => requests[i]);
          const messages = batchMessages(prompt, batch, { dataset: datasetName, db: db.dbId, schema });
          const results = await synthesizeBatch(
            client,
            messages,
            batch.map((r) => r.instance),
            db,
            datasetName,
          );
          indices.forEach((index, i) => (outcomes[index] = results[i]));
        }),
      );
      return outcomes;
    },
  };
}

// ---- the reply: snake_case on the wire, lenient where a model is sloppy for nothing --------

const InstanceId = z.union([z.string(), z.number()]).transform(String);
const WireValue = z.union([z.string(), z.number(), z.boolean()]);

const WireParameter = z.object({
  name: z.string().trim(),
  type: z.string().trim().toLowerCase(),
  description: z.string().trim(),
  required: z.boolean().default(true),
  example: WireValue.nullish(),
});

/** Unknown fields (a `path` of the model's own, say) are dropped: we build the path. */
const WireEndpoint = z.object({
  instance_id: InstanceId,
  operation_id: z.string().trim(),
  summary: z.string().trim(),
  description: z.string().trim().default(''),
  parameters: z.array(WireParameter).default([]),
  sql: z.string().trim(),
  response_description: z.string().trim(),
  /** null: an optional parameter left out. */
  arguments: z.record(z.string(), WireValue.nullable()).default({}),
});

/**
 * Only the envelope is checked for the whole reply; each endpoint is parsed on its own, so
 * one malformed endpoint costs its instance and not the whole batch.
 */
const WireReply = z.object({ endpoints: z.array(z.object({ instance_id: InstanceId }).loose()) });

/** The reply's shape as the system prompt shows it; typed as the wire input so that the two cannot drift apart. */
const OUTPUT_EXAMPLE: { endpoints: z.input<typeof WireEndpoint>[] } = {
  endpoints: [
    {
      instance_id: '42',
      operation_id: 'getProductNamesByCategoryAndMaxPrice',
      summary: 'Get product names by category and maximum price',
      description:
        'Returns the names of the products of a category that cost less than a maximum price, cheapest first.',
      parameters: [
        {
          name: 'category',
          type: 'string',
          description: 'Product category to match; column product.category (e.g. Toys)',
          required: true,
          example: 'Toys',
        },
        {
          name: 'max_price',
          type: 'number',
          description: 'Upper bound (exclusive) of the price, in US dollars; column product.price',
          required: true,
          example: 10,
        },
      ],
      sql: 'SELECT name FROM product WHERE category = :category AND price < :max_price ORDER BY price',
      response_description: 'Rows with the column name (product name)',
      arguments: { category: 'Toys', max_price: 10 },
    },
  ],
};
const OUTPUT_FORMAT = JSON.stringify(OUTPUT_EXAMPLE, null, 2);

async function synthesizeBatch(
  client: LlmClient,
  messages: LlmMessage[],
  instances: Instance[],
  db: DatabaseInfo,
  datasetName: string,
): Promise<Outcome<SynthesizedEndpoint>[]> {
  const reply = await completeStructured(client, messages, WireReply);
  if (!reply.ok) return instances.map(() => reject(reply.category, reply.message));
  const byId = new Map<string, unknown>();
  for (const endpoint of reply.value.endpoints)
    if (!byId.has(endpoint.instance_id)) byId.set(endpoint.instance_id, endpoint);
  return instances.map(({ id }) => {
    const proposed = byId.get(id);
    return proposed === undefined
      ? reject('llm:schema', `no endpoint for instance ${id} in the reply`)
      : toEndpoint(proposed, db, datasetName);
  });
}

/** One proposed endpoint → spec and call, or `llm:schema` with zod's message. Reads nothing but the data. */
function toEndpoint(proposed: unknown, db: DatabaseInfo, datasetName: string): Outcome<SynthesizedEndpoint> {
  const wire = WireEndpoint.safeParse(proposed);
  if (!wire.success) return reject('llm:schema', z.prettifyError(wire.error));
  const endpoint = wire.data;
  // An overlong name is cut at a word boundary, as the template synthesizer's are, rather than costing a retry.
  const operationId = truncateIdentifier(endpoint.operation_id);
  const spec = EndpointSpecSchema.safeParse({
    operationId,
    path: endpointPath(datasetName, db.dbId, operationId),
    summary: endpoint.summary,
    description: endpoint.description,
    parameters: endpoint.parameters.map(({ example, ...parameter }) =>
      example == null ? parameter : { ...parameter, example },
    ),
    sql: endpoint.sql,
    response: { description: endpoint.response_description },
  });
  if (!spec.success) return reject('llm:schema', z.prettifyError(spec.error));
  const args = Object.fromEntries(
    Object.entries(endpoint.arguments).filter((entry): entry is [string, ArgumentValue] => entry[1] !== null),
  );
  return accept({ spec: spec.data, call: { name: operationId, path: spec.data.path, arguments: args } });
}

// ---- the request ------------------------------------------------------------------------------

/**
 * Indices of the requests of each model call: first attempts `batchSize` at a time; each
 * retry alone, since its feedback is a conversation about that one instance.
 */
function batches(requests: readonly SynthesisRequest[], batchSize: number): number[][] {
  const fresh: number[] = [];
  const retries: number[][] = [];
  requests.forEach((request, i) => (request.previous.length ? retries.push([i]) : fresh.push(i)));
  const chunks: number[][] = [];
  for (let start = 0; start < fresh.length; start += batchSize) chunks.push(fresh.slice(start, start + batchSize));
  return [...chunks, ...retries];
}

/** The prompt for one batch, then the feedback of its earlier attempts (only a retry has any). */
function batchMessages(
  prompt: PromptTemplate,
  batch: readonly SynthesisRequest[],
  context: { dataset: string; db: string; schema: string },
): LlmMessage[] {
  const instances = batch.map((r) => r.instance);
  const messages = prompt.render({
    ...context,
    output_format: OUTPUT_FORMAT,
    count: String(instances.length),
    instances: instancesBlock(instances),
  });
  return mergeUserMessages([...messages, ...batch.flatMap(feedback)]);
}

/** Each table: its columns (name, type, description, values), primary key and foreign keys. */
function schemaBlock(db: DatabaseInfo): string {
  return db.tables.map(tableBlock).join('\n\n');
}

function tableBlock(table: TableInfo): string {
  const keys = [
    ...(table.primaryKey.length ? [`primary key: ${table.primaryKey.map(quoteName).join(', ')}`] : []),
    ...table.foreignKeys.map(
      (fk) => `foreign key: ${quoteName(fk.column)} → ${quoteName(fk.refTable)}.${quoteName(fk.refColumn)}`,
    ),
  ];
  return [
    `table ${quoteName(table.name)}`,
    ...table.columns.map((c) => `  - ${columnLine(c)}`),
    ...keys.map((k) => `  ${k}`),
  ].join('\n');
}

function columnLine(column: ColumnInfo): string {
  const description = oneLine(column.description);
  const values = clip(oneLine(column.valueDescription), 200);
  return [
    `${quoteName(column.name)} ${column.type || 'untyped'}`,
    // Sources fall back to the column name when they have no description: nothing to add.
    description.toLowerCase() === column.name.toLowerCase() ? '' : description,
    values ? `values: ${values}` : '',
  ]
    .filter(Boolean)
    .join(' — ');
}

/** Backticks, as BIRD's SQL quotes names (`Price (USD)`), for names that need quoting. */
function quoteName(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : `\`${name.replace(/`/g, '``')}\``;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function instancesBlock(instances: readonly Instance[]): string {
  return instances
    .map((i) =>
      [
        `instance_id: ${JSON.stringify(i.id)}`,
        `question: ${oneLine(i.question)}`,
        `evidence: ${oneLine(i.evidence) || '(none)'}`,
        `sql: ${i.sql.trim()}`,
      ].join('\n'),
    )
    .join('\n\n');
}

// ---- feedback from earlier attempts ------------------------------------------------------------

function feedback(request: SynthesisRequest): LlmMessage[] {
  return request.previous.flatMap((attempt) => attemptFeedback(request.instance.id, attempt));
}

/**
 * What the model should hear about one failed attempt: its own proposal and why it failed;
 * for a reply that could not be read, the usual structured-output feedback; for a call that
 * failed (timeout, 5xx, ...) nothing, since the model never saw that request.
 */
function attemptFeedback(instanceId: string, attempt: FailedAttempt): LlmMessage[] {
  const fix: LlmMessage = {
    role: 'user',
    content: `The endpoint you proposed for instance ${instanceId} failed ${attempt.category}: ${attempt.message}\nFix it, and reply again with the complete JSON for this instance only.`,
  };
  if (attempt.endpoint)
    return [
      {
        role: 'assistant',
        content: JSON.stringify({ endpoints: [toWire(instanceId, attempt.endpoint.spec, attempt.endpoint.arguments)] }),
      },
      fix,
    ];
  if (isReplyFailure(attempt.category))
    return failureFeedback({ ok: false, category: attempt.category, message: attempt.message });
  return attempt.category.startsWith('llm:') ? [] : [fix];
}

function isReplyFailure(category: string): category is LlmReplyFailure {
  return category === 'llm:invalid_json' || category === 'llm:schema';
}

function toWire(
  instanceId: string,
  spec: EndpointSpec,
  args: Record<string, ArgumentValue>,
): z.input<typeof WireEndpoint> {
  return {
    instance_id: instanceId,
    operation_id: spec.operationId,
    summary: spec.summary,
    description: spec.description,
    parameters: spec.parameters,
    sql: spec.sql,
    response_description: spec.response.description,
    arguments: args,
  };
}

/** Adjacent user messages joined into one: some chat templates insist on alternating roles. */
function mergeUserMessages(messages: LlmMessage[]): LlmMessage[] {
  const merged: LlmMessage[] = [];
  for (const message of messages) {
    const last = merged[merged.length - 1];
    if (last?.role === 'user' && message.role === 'user')
      merged[merged.length - 1] = { role: 'user', content: `${last.content}\n\n${message.content}` };
    else merged.push(message);
  }
  return merged;
}
