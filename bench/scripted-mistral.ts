import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promptsDir } from '../generators/rest/prompts.js';

/**
 * A content-based scripted Mistral: a local HTTP server speaking Mistral's chat-completions
 * protocol (POST /v1/chat/completions) that answers by reading the request. The system
 * prompt says which agent is asking (REST synthesis, answer judge, dedup agent: matched on
 * the first line of each seeds/prompts/<name>.system.md); for synthesis the user prompt's
 * instances (`instance_id: "<id>"`, question, evidence, `sql: ...`) are parsed and each gets
 * the endpoint its test's behaviour decides (by default a correct one built from its gold
 * SQL). Every request is recorded, with the agent, the instances and what was sent back.
 */

export type Agent = 'synthesis' | 'judge' | 'dedup' | 'unknown';

export interface ChatMessage {
  role: string;
  content: string;
}

/** One instance as the synthesis prompt lists it. */
export interface PromptInstance {
  id: string;
  question: string;
  evidence: string;
  sql: string;
}

/** The reply shape of rest-synthesize.system.md (snake_case on the wire). */
export interface WireEndpoint {
  instance_id: string;
  operation_id: string;
  summary: string;
  description: string;
  parameters: {
    name: string;
    type: string;
    description: string;
    required: boolean;
    example?: string | number | boolean;
  }[];
  sql: string;
  response_description: string;
  arguments: Record<string, string | number | boolean | null>;
}

/** A whole-request answer: an HTTP error, raw content, a delay. Content defaults to the agent's normal reply. */
export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  /** The assistant message's content (a 200 reply). */
  content?: string;
  /** Wait this long before answering (the client may give up first). */
  delayMs?: number;
}

export interface SynthesisContext {
  db: string;
  instances: PromptInstance[];
  /** Per instance id: how many synthesis requests have listed it so far, this one included (1 = first attempt). */
  attempt: Record<string, number>;
  messages: ChatMessage[];
}

export interface JudgeContext {
  question: string;
  messages: ChatMessage[];
}

export interface JudgeDecision {
  verdict: 'yes' | 'no';
  rationale: string;
}

export interface Behaviour {
  /** A whole-request override for a synthesis request; undefined: reply with `endpoint` per instance. */
  synthesisReply?(ctx: SynthesisContext): Reply | undefined;
  /** The endpoint proposed for an instance at its n-th attempt; default goodEndpoint; null leaves it out of the reply. */
  endpoint?(instance: PromptInstance, attempt: number, ctx: SynthesisContext): WireEndpoint | null;
  /** The judge's answer; default: yes. */
  judge?(ctx: JudgeContext): JudgeDecision | Reply;
  /** The dedup agent's answer; default `{"merges": []}`. */
  dedup?(messages: ChatMessage[]): Reply | undefined;
}

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
  agent: Agent;
  messages: ChatMessage[];
  /** Synthesis only: the database and the instance ids the prompt lists. */
  db?: string;
  instances?: string[];
  status: number;
  content?: string;
  usage?: { prompt_tokens: number; completion_tokens: number };
  /** The client closed the connection before the reply was sent. */
  abandoned: boolean;
}

export interface ScriptedMistral {
  /** http://127.0.0.1:<port> (the Mistral SDK appends /v1/chat/completions). */
  url: string;
  requests: RecordedRequest[];
  /** Replace the behaviour (e.g. between two runs of one test). */
  behaviour: Behaviour;
  of(agent: Agent): RecordedRequest[];
  close(): Promise<void>;
}

const PROMPTS_DIR = promptsDir();
/** The first line of each agent's system prompt: how a request says who is asking. */
const AGENT_MARKERS: [Agent, string][] = (
  [
    ['synthesis', 'rest-synthesize'],
    ['judge', 'rest-judge'],
    ['dedup', 'rest-dedup'],
  ] as const
).map(([agent, name]) => [
  agent,
  readFileSync(path.join(PROMPTS_DIR, `${name}.system.md`), 'utf8')
    .split('\n')[0]
    .trim(),
]);

export function agentOf(messages: readonly ChatMessage[]): Agent {
  const system = messages.find((m) => m.role === 'system')?.content ?? '';
  return AGENT_MARKERS.find(([, marker]) => system.startsWith(marker))?.[0] ?? 'unknown';
}

/** The instances listed in the first user message of a synthesis request. */
export function promptInstances(messages: readonly ChatMessage[]): { db: string; instances: PromptInstance[] } {
  const user = messages.find((m) => m.role === 'user')?.content ?? '';
  const db = /^Database: (.*)$/m.exec(user)?.[1].trim() ?? '';
  const instances: PromptInstance[] = [];
  const block = /^instance_id: (".*")\nquestion: (.*)\nevidence: (.*)\nsql: (.*)$/gm;
  for (const match of user.matchAll(block)) {
    instances.push({
      id: JSON.parse(match[1]) as string,
      question: match[2],
      evidence: match[3],
      sql: match[4].trim(),
    });
  }
  return { db, instances };
}

/**
 * A correct endpoint for an instance: its gold SQL with double-quoted strings in single
 * quotes (the format check refuses `"Alice"`), and the first `= 'literal'` (or `!=`, `<>`)
 * turned into the string parameter `:value`; no parameter when there is no such literal.
 */
export function goodEndpoint(instance: PromptInstance, sql: string = instance.sql): WireEndpoint {
  let text = sql.replace(/"([^"]*)"/g, "'$1'");
  const literal = /(=|!=|<>)\s*'([^']*)'/.exec(text);
  const parameters: WireEndpoint['parameters'] = [];
  const args: WireEndpoint['arguments'] = {};
  if (literal) {
    text = `${text.slice(0, literal.index)}${literal[1]} :value${text.slice(literal.index + literal[0].length)}`;
    parameters.push({
      name: 'value',
      type: 'string',
      description: 'The value compared with',
      required: true,
      example: literal[2],
    });
    args.value = literal[2];
  }
  return {
    instance_id: instance.id,
    operation_id: `getAnswerOfQuestion${instance.id.replace(/[^A-Za-z0-9]/g, '')}`,
    summary: `Answers question ${instance.id}`,
    description: `Returns the rows answering: ${instance.question}`,
    parameters,
    sql: text,
    response_description: 'The rows of the query',
    arguments: args,
  };
}

/** Rough token counts, so that usage accounting has something to add up. */
const tokens = (text: string): number => Math.max(1, Math.ceil(text.length / 4));

export async function startScriptedMistral(behaviour: Behaviour = {}): Promise<ScriptedMistral> {
  const requests: RecordedRequest[] = [];
  const attempts = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  const handle: ScriptedMistral = {
    url: '',
    requests,
    behaviour,
    of: (agent) => requests.filter((r) => r.agent === agent),
    close: async () => undefined,
  };

  const answer = (record: RecordedRequest): Reply => {
    const b = handle.behaviour;
    switch (record.agent) {
      case 'synthesis': {
        const { db, instances } = promptInstances(record.messages);
        const key = (id: string) => `${db}/${id}`;
        for (const i of instances) attempts.set(key(i.id), (attempts.get(key(i.id)) ?? 0) + 1);
        const ctx: SynthesisContext = {
          db,
          instances,
          attempt: Object.fromEntries(instances.map((i) => [i.id, attempts.get(key(i.id))!])),
          messages: record.messages,
        };
        record.db = db;
        record.instances = instances.map((i) => i.id);
        const override = b.synthesisReply?.(ctx);
        if (override && (override.status !== undefined || override.content !== undefined)) return override;
        const endpoints = instances.flatMap((i) => {
          const endpoint = b.endpoint ? b.endpoint(i, ctx.attempt[i.id], ctx) : goodEndpoint(i);
          return endpoint ? [endpoint] : [];
        });
        return { ...override, content: JSON.stringify({ endpoints }) };
      }
      case 'judge': {
        const user = record.messages.find((m) => m.role === 'user')?.content ?? '';
        const question = /^Question: (.*)$/m.exec(user)?.[1] ?? '';
        const decision = b.judge?.({ question, messages: record.messages }) ?? {
          verdict: 'yes',
          rationale: 'scripted: the response holds the asked values',
        };
        return 'verdict' in decision ? { content: JSON.stringify(decision) } : decision;
      }
      case 'dedup':
        return b.dedup?.(record.messages) ?? { content: JSON.stringify({ merges: [] }) };
      default:
        return { status: 400, content: 'unknown agent' };
    }
  };

  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
    req.on('end', () => {
      const body = (raw ? JSON.parse(raw) : {}) as Record<string, unknown>;
      const messages = Array.isArray(body.messages)
        ? (body.messages as { role: string; content: unknown }[]).map((m) => ({
            role: m.role,
            content: textOf(m.content),
          }))
        : [];
      const record: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body,
        agent: agentOf(messages),
        messages,
        status: 0,
        abandoned: false,
      };
      requests.push(record);
      res.on('close', () => {
        if (!res.writableFinished) record.abandoned = true;
      });
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        record.status = 404;
        return send(res, 404, {}, { object: 'error', message: 'not found', type: 'scripted', code: '404' });
      }
      let reply: Reply;
      try {
        reply = answer(record);
      } catch (error) {
        reply = { status: 500, content: `scripted server bug: ${(error as Error).stack}` };
      }
      const respond = () => {
        if (res.destroyed) return;
        const status = reply.status ?? 200;
        record.status = status;
        if (status !== 200) {
          return send(res, status, reply.headers ?? {}, {
            object: 'error',
            message: reply.content ?? `scripted ${status}`,
            type: 'scripted',
            code: String(status),
          });
        }
        const content = reply.content ?? '';
        const promptText = messages.map((m) => m.content).join('\n');
        const usage = { prompt_tokens: tokens(promptText), completion_tokens: tokens(content) };
        record.content = content;
        record.usage = usage;
        send(res, 200, reply.headers ?? {}, {
          id: `cmpl-${requests.indexOf(record)}`,
          object: 'chat.completion',
          created: 1_700_000_000,
          model: typeof body.model === 'string' ? body.model : 'scripted',
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
          usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
        });
      };
      if (!reply.delayMs) return respond();
      const timer = setTimeout(() => {
        timers.delete(timer);
        respond();
      }, reply.delayMs);
      timers.add(timer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  handle.url = `http://127.0.0.1:${port}`;
  let closed: Promise<void> | undefined;
  handle.close = () => {
    closed ??= new Promise<void>((resolve, reject) => {
      for (const timer of timers) clearTimeout(timer);
      server.close((e) => (e ? reject(e) : resolve()));
      server.closeAllConnections();
    });
    return closed;
  };
  return handle;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content.map((part) => (typeof part === 'string' ? part : ((part as { text?: string }).text ?? ''))).join('');
  return '';
}

function send(res: ServerResponse, status: number, headers: Record<string, string>, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}
