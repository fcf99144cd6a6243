import { createServer, type ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { unconsumedLabels } from '../eval/answer-labels.js';
import { relabel } from '../eval/metrics/alignment.js';
import type { EvalItem } from '../eval/dataset.js';

/**
 * A scripted tool-calling model behind the chat-completions protocol that OpenAI-compatible
 * servers and Mistral share (POST /v1/chat/completions): it reads the question out of the
 * first user turn and answers with that question's calls — as native `tool_calls` when the
 * request binds tools, else as a JSON list in the text; in a ReAct conversation one call per
 * turn, then "Final Answer". Native calls are what a real model sends: an id per call, no
 * label, a later call naming an earlier output by that call's id (one reply) or by the
 * handle its tool result gave (ReAct). What an evaluation's real provider path needs to be
 * exercised without a real model: the LangChain clients, tool binding, retries and caching
 * all run.
 */

export interface ScriptedCall {
  name: string;
  arguments: Record<string, unknown>;
  label?: string;
}

/** Each item's gold calls by its question: a scripted model that answers every item right. */
export function goldAnswers(items: readonly EvalItem[]): Map<string, ScriptedCall[]> {
  return new Map(
    items.map((item) => [
      item.question,
      item.goldCalls.map((c) => ({ name: c.name, arguments: c.arguments, ...(c.label ? { label: c.label } : {}) })),
    ]),
  );
}

export interface ChatServerOptions {
  /** The calls to answer each question with. */
  answers: ReadonlyMap<string, ScriptedCall[]>;
  /** Latency of every reply. */
  delayMs?: number;
  /** Answer the first N requests with 429 (Retry-After: 0). */
  rateLimitFirst?: number;
}

export interface ChatRequestRecord {
  question: string;
  native: boolean;
  status: number;
  /** The client went away before the reply was sent. */
  abandoned: boolean;
}

export interface ChatServer {
  url: string;
  requests: ChatRequestRecord[];
  /** The most requests it held unanswered at once. */
  maxInFlight(): number;
  close(): Promise<void>;
}

interface WireMessage {
  role: string;
  content?: unknown;
}

export async function startChatServer(options: ChatServerOptions): Promise<ChatServer> {
  const requests: ChatRequestRecord[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      // Whole, then decoded: a character split between two chunks stays whole.
      const raw = Buffer.concat(chunks).toString('utf8');
      if (req.method === 'GET' && req.url === '/requests') return send(res, 200, requests);
      const body = JSON.parse(raw || '{}') as { messages?: WireMessage[]; tools?: unknown[] };
      const messages = body.messages ?? [];
      const question = questionOf(messages);
      const native = Array.isArray(body.tools) && body.tools.length > 0;
      const record: ChatRequestRecord = { question, native, status: 200, abandoned: false };
      requests.push(record);
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      res.on('close', () => {
        inFlight--;
        if (!res.writableFinished) record.abandoned = true;
      });
      const reply = () => {
        if (res.destroyed) return;
        if (requests.indexOf(record) < (options.rateLimitFirst ?? 0)) {
          record.status = 429;
          return send(
            res,
            429,
            { object: 'error', message: 'rate limited', type: 'rate_limit', code: '429' },
            { 'retry-after': '0' },
          );
        }
        const calls = options.answers.get(question);
        if (!calls) {
          record.status = 400;
          return send(res, 400, {
            object: 'error',
            message: `unknown question: ${question}`,
            type: 'invalid_request_error',
          });
        }
        send(res, 200, completion(calls, messages, native));
      };
      if (options.delayMs) setTimeout(reply, options.delayMs);
      else reply();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    maxInFlight: () => maxInFlight,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((e) => (e ? reject(e) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/** The question of the conversation: after the last "Question: " of its first user turn (examples come before it), up to its evidence. */
function questionOf(messages: readonly WireMessage[]): string {
  const user = messages.find((m) => m.role === 'user');
  const text = typeof user?.content === 'string' ? user.content : '';
  const start = text.lastIndexOf('Question: ');
  if (start < 0) return '';
  const rest = text.slice(start + 'Question: '.length);
  const end = rest.lastIndexOf('\nEvidence: ');
  return end < 0 ? rest : rest.slice(0, end);
}

function completion(calls: readonly ScriptedCall[], messages: readonly WireMessage[], native: boolean): unknown {
  const react = messages.some((m) => typeof m.content === 'string' && m.content.includes('Final Answer:'));
  const step = messages.filter((m) => m.role === 'assistant').length;
  // What the model calls each gold output: its label in text; natively, the call's id, or in ReAct the handle it was given.
  const handles = messages.filter((m) => m.role === 'tool').map(handleOf);
  const nameOf = (j: number) => (!native ? (calls[j].label ?? '') : react ? (handles[j] ?? '') : callId(j));
  const byLabel = new Map(calls.flatMap((c, j) => (c.label ? [[c.label, j] as const] : [])));
  const names = new Map([...byLabel].map(([label, j]) => [label, nameOf(j)]));
  const renamed = (value: unknown): unknown => (native ? relabel(value, names) : value);
  const toolCall = (j: number) => ({
    id: callId(j),
    type: 'function',
    function: { name: calls[j].name, arguments: JSON.stringify(renamed(calls[j].arguments)) },
  });
  let message: Record<string, unknown>;
  if (!react) {
    message = native
      ? { role: 'assistant', content: '', tool_calls: calls.map((_, j) => toolCall(j)) }
      : { role: 'assistant', content: JSON.stringify(calls) };
  } else if (step < calls.length) {
    message = native
      ? { role: 'assistant', content: '', tool_calls: [toolCall(step)] }
      : { role: 'assistant', content: `Thought: step ${step + 1}.\nAction: ${JSON.stringify(calls[step])}` };
  } else {
    const answer = calls.some((c) => c.label)
      ? unconsumedLabels(calls.map((c) => ({ label: c.label ?? '', arguments: c.arguments }))).map((l) =>
          nameOf(byLabel.get(l)!),
        )
      : [calls[calls.length - 1]?.name];
    message = { role: 'assistant', content: `Thought: done.\nFinal Answer: ${JSON.stringify(answer)}` };
  }
  return {
    id: 'scripted',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'scripted',
    choices: [{ index: 0, message, finish_reason: 'tool_calls' in message ? 'tool_calls' : 'stop' }],
    usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
  };
}

/** Nine letters and digits: the one id form Mistral's API accepts and OpenAI's allows. */
function callId(j: number): string {
  return `call${String(j).padStart(5, '0')}`;
}

/** The handle a ReAct tool result names its output by (none for a REST response or an error). */
function handleOf(message: WireMessage): string | undefined {
  try {
    const body = JSON.parse(typeof message.content === 'string' ? message.content : '') as { handle?: unknown };
    return typeof body?.handle === 'string' ? body.handle : undefined;
  } catch {
    return undefined;
  }
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/**
 * Run as its own process (`node scripted-chat.js <answers.json> <delay ms>`), as a remote
 * provider is: its JSON parsing does not compete with the evaluation for a core. Prints its
 * URL; `GET /requests` lists what it was asked.
 */
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [answersFile, delay] = process.argv.slice(2);
  const answers = new Map(JSON.parse(readFileSync(answersFile, 'utf8')) as [string, ScriptedCall[]][]);
  const server = await startChatServer({ answers, delayMs: Number(delay ?? 0) });
  process.stdout.write(`${server.url}\n`);
  process.once('SIGTERM', () => void server.close().then(() => process.exit(0)));
}
