import autocannon from 'autocannon';

/**
 * Load measurement of a served endpoint with a real load generator (autocannon), for
 * `npm run bench`. Loopback only: it is a benchmark of our server, not a load test of
 * anyone else's. autocannon is a dev dependency: only the bench imports this module.
 */

export interface ThroughputOptions {
  connections: number;
  durationSeconds: number;
}

export interface Throughput {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Failed requests: connection errors, timeouts and non-2xx responses. */
  errors: number;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

export async function measureThroughput(url: string, path: string, options: ThroughputOptions): Promise<Throughput> {
  const target = new URL(path, url);
  if (!LOOPBACK.has(target.hostname))
    throw new Error(`measureThroughput targets loopback only, not ${target.hostname}`);
  if (!Number.isInteger(options.connections) || options.connections < 1)
    throw new Error('connections must be a positive integer');
  if (!(options.durationSeconds > 0 && options.durationSeconds <= 600))
    throw new Error('durationSeconds must be in (0, 600]');
  const result = await autocannon({
    url: target.href,
    method: 'GET',
    connections: options.connections,
    duration: options.durationSeconds,
  });
  return {
    requestsPerSecond: result.duration > 0 ? Math.round(result.requests.total / result.duration) : 0,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
  };
}
