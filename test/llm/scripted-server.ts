import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scripted answer of the fake chat-completions server. */
export interface ScriptedResponse {
  status?: number;
  headers?: Record<string, string>;
  /** JSON-serialized unless a string. */
  body: unknown;
  /** Wait this long before answering (the client may give up first). */
  delayMs?: number;
}

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
  /** The client closed the connection before the reply was sent. */
  abandoned: boolean;
}

export interface ScriptedServer {
  /** http://127.0.0.1:<port> */
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** A chat-completions reply (Mistral's and OpenAI's share this shape). */
export function completion(content: string, usage = { prompt_tokens: 12, completion_tokens: 5 }): ScriptedResponse {
  return {
    body: {
      id: 'cmpl-test',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'scripted-model',
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    },
  };
}

export function errorReply(status: number, headers: Record<string, string> = {}): ScriptedResponse {
  return {
    status,
    headers,
    body: { object: 'error', message: `scripted ${status}`, type: 'scripted', code: String(status) },
  };
}

/**
 * A local HTTP server on 127.0.0.1 (ephemeral port) answering POST /v1/chat/completions
 * with its script, one response per request (the last one repeats).
 */
export async function startScriptedServer(script: ScriptedResponse[]): Promise<ScriptedServer> {
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      // Whole, then decoded: a character split between two chunks stays whole.
      const raw = Buffer.concat(chunks).toString('utf8');
      const record: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: raw ? JSON.parse(raw) : {},
        abandoned: false,
      };
      requests.push(record);
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions')
        return send(res, { status: 404, body: { message: 'not found' } });
      const step = script[Math.min(requests.length - 1, script.length - 1)];
      res.on('close', () => {
        if (!res.writableFinished) record.abandoned = true;
      });
      if (!step.delayMs) return send(res, step);
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (!res.destroyed) send(res, step);
      }, step.delayMs);
      timers.add(timer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  let closed: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => {
      closed ??= new Promise<void>((resolve, reject) => {
        for (const timer of timers) clearTimeout(timer);
        server.close((e) => (e ? reject(e) : resolve()));
        server.closeAllConnections();
      });
      return closed;
    },
  };
}

function send(res: ServerResponse, step: ScriptedResponse): void {
  const body = typeof step.body === 'string' ? step.body : JSON.stringify(step.body);
  res.writeHead(step.status ?? 200, { 'content-type': 'application/json', ...step.headers });
  res.end(body);
}

/** For a describe block: a scripted server per test, closed after each test. */
export function scriptedServerPerTest(): (script: ScriptedResponse[]) => Promise<ScriptedServer> {
  let server: ScriptedServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  return async (script) => (server = await startScriptedServer(script));
}
