import type { Redis } from 'ioredis';
import { closeConnection, redisConnection } from '../pipeline/queue/connection.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * Redis for tests. `REDIS_URL` wins (CI's service, a developer's own server); otherwise each
 * test file starts a throwaway `redis-server` of its own on a free port, so that a stopped or
 * restarted server (fault tests) never disturbs another file. Every test gets a fresh key
 * prefix, so files sharing one server never see each other's keys.
 */

export interface TestRedis {
  url: string;
  /** A key prefix no other test uses. */
  prefix: string;
  /** Stops the server if we started it; a server named by REDIS_URL is left alone. */
  stop(): Promise<void>;
}

export interface RedisProcess {
  url: string;
  port: number;
  dir: string;
  /** Ends the server (waits for it to exit); removes `dir` if `startRedisServer` created it. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Ends the server with `signal` (waits for it to exit), then starts it again on the same port and dir. */
  restart(signal?: NodeJS.Signals): Promise<void>;
}

export interface RedisServerOptions {
  /** true: AOF with an fsync per write (what was acknowledged survives even SIGKILL). */
  persistence: boolean;
  /** Working directory (AOF files); a fresh temp dir if absent. */
  dir?: string;
  /** A free port if absent. */
  port?: number;
}

const READY_TIMEOUT_MS = 10_000;
const EXIT_TIMEOUT_MS = 10_000;

export async function redisForTests(): Promise<TestRedis> {
  const prefix = `t${randomBytes(6).toString('hex')}`;
  const url = process.env.REDIS_URL;
  if (url) return { url, prefix, stop: async () => {} };
  if (!onPath('redis-server')) {
    throw new Error(
      'Redis tests need either REDIS_URL (a Redis server to use) or a redis-server binary on PATH (one is started per test file).',
    );
  }
  const server = await startRedisServer({ persistence: false });
  return { url: server.url, prefix, stop: () => server.stop() };
}

export async function startRedisServer(options: RedisServerOptions): Promise<RedisProcess> {
  const ownDir = options.dir === undefined;
  const dir = options.dir ?? mkdtempSync(path.join(os.tmpdir(), 'nl2api-redis-'));
  const port = options.port ?? (await freePort());
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--daemonize',
    'no',
    '--save',
    '',
    ...(options.persistence ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']),
  ];
  let child: ChildProcess;
  try {
    child = await launch(args, port);
  } catch (error) {
    if (ownDir) rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    async stop(signal = 'SIGTERM') {
      await terminate(child, signal);
      if (ownDir) rmSync(dir, { recursive: true, force: true });
    },
    async restart(signal = 'SIGTERM') {
      await terminate(child, signal);
      child = await launch(args, port);
    },
  };
}

/** Starts redis-server and resolves once it answers PING (not while it is still loading its AOF). */
async function launch(args: string[], port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  // The server's own words, for the error if it never comes up (a taken port, a bad option).
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-4000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let failure: Error | undefined;
  child.on('error', (error) => (failure = error));
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (failure || exited(child)) {
      throw new Error(
        `redis-server on port ${port} did not start: ${failure?.message ?? `exit ${child.exitCode}`}\n${output}`,
      );
    }
    if (await answersPing(port)) return child;
    if (Date.now() > deadline) {
      await terminate(child, 'SIGKILL');
      throw new Error(`redis-server on port ${port} did not answer PING within ${READY_TIMEOUT_MS} ms\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

async function terminate(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (exited(child)) return;
  const exit = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  // A server that ignores SIGTERM (stuck writing) must not hang the test run.
  const timer = setTimeout(() => child.kill('SIGKILL'), EXIT_TIMEOUT_MS);
  await exit;
  clearTimeout(timer);
}

/** One raw PING over TCP: no client library, no reconnect loop to tear down. */
function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.createConnection({ host: '127.0.0.1', port });
    let reply = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('utf8');
      // "-LOADING ..." while the AOF is replayed: not ready yet.
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
  });
}

/**
 * A port the OS just handed out and nothing listens on now (another process may take it
 * before redis-server binds; rare). Also a port where a connection is refused.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function onPath(binary: string): boolean {
  return (process.env.PATH ?? '').split(path.delimiter).some((dir) => {
    try {
      accessSync(path.join(dir, binary), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** A test Redis and two connections to it (two workers, as far as the code under test can tell). */
export async function connectedPair(): Promise<{
  server: TestRedis;
  redis: Redis;
  other: Redis;
  close: () => Promise<void>;
}> {
  const server = await redisForTests();
  const redis = redisConnection(server.url);
  const other = redisConnection(server.url);
  return {
    server,
    redis,
    other,
    close: async () => {
      await closeConnection(redis);
      await closeConnection(other);
      await server.stop();
    },
  };
}
