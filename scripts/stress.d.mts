// Types of stress.mjs, for its test in tools/scripts-test.
export declare const DEFAULT_STRESS_MAX_SECONDS: number;

export interface CpuHog {
  readonly pids: readonly number[];
  readonly maxSeconds: number;
  /** How many spin loops are still alive. */
  running(): number;
  /** Kills the loops still alive and resolves once all are gone. */
  stop(): Promise<void>;
  /** Sends the kill without waiting (for an `exit` handler). */
  stopNow(): void;
}

export declare function stressRequested(argv: readonly string[], env: NodeJS.ProcessEnv): boolean;
export declare function stressMaxSeconds(env: NodeJS.ProcessEnv): number;
export declare function startCpuHog(options: { readonly maxSeconds: number; readonly workers?: number }): CpuHog;
