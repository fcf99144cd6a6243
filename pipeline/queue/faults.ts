/**
 * Fault injection for the queue's fault tests and benchmark: `NL2API_POISON=<id>[,<id>…]`
 * makes a worker kill its own process (SIGKILL, no cleanup) when a job touches one of these
 * instance ids — a poison job, as a native crash or an out-of-memory kill would make one.
 * Unset in normal use.
 */
const poisoned = new Set((process.env.NL2API_POISON ?? '').split(',').filter(Boolean));

export function crashIfPoisoned(instanceId: string): void {
  if (poisoned.has(instanceId)) process.kill(process.pid, 'SIGKILL');
}
