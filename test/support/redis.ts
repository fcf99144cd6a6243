/** The tests' Redis: bench/redis-process.ts (shared with the benchmark, which starts its own too). */
export {
  connectedPair,
  redisForTests,
  startRedisServer,
  type RedisProcess,
  type TestRedis,
} from '../../bench/redis-process.js';
