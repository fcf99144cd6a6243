import { countTokens, type TokenJob, type TokenReply } from './tokens.js';

/** The token-counting child process of an export (tokens.ts SegmentTokenizer): counts each batch it is sent, in order. */

process.on('message', (job: TokenJob) => {
  let reply: TokenReply;
  try {
    reply = { first: job.first, counts: job.segments.map((segment) => countTokens(segment, job.encoding)) };
  } catch (error) {
    reply = { first: job.first, error: (error as Error).message };
  }
  process.send?.(reply);
});

// The export is done with it (or went away).
process.on('disconnect', () => process.exit(0));
