import { closeConnection, redisConnection } from '../../pipeline/queue/connection.js';
import { startRedisServer } from './redis.js';
import { existsSync } from 'node:fs';

describe('test Redis servers', () => {
  test('with persistence, an acknowledged write survives a restart (and a kill -9) on the same port', async () => {
    const server = await startRedisServer({ persistence: true });
    const redis = redisConnection(server.url);
    try {
      await redis.set('k', 'v1');
      await server.restart();
      expect(await redis.get('k')).toBe('v1'); // the connection reconnects by itself
      await redis.set('k', 'v2');
      await server.restart('SIGKILL');
      expect(await redis.get('k')).toBe('v2');
    } finally {
      await closeConnection(redis);
      await server.stop();
    }
    expect(existsSync(server.dir)).toBe(false);
  });
});
