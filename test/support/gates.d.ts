/** Types of gates.js (plain JavaScript: jest.config.js reads it before TypeScript is compiled). */
export declare const BIRD_DIR: string;
export interface ClosedGate {
  reason: string;
  what: string;
  files: string[];
  wholeFiles: boolean;
}
export declare function closedGates(env?: NodeJS.ProcessEnv): ClosedGate[];
export declare function unprivilegedUser(): { uid: number; gid: number } | Record<string, never> | null;
