/**
 * An error whose message is the whole story for the person who ran nl2api: bad input, a
 * setup mistake, a service that is not there. The CLI prints its message as one line and
 * exits 1; anything else thrown is a fault of ours and gets its stack.
 */
export class UserFacingError extends Error {}
