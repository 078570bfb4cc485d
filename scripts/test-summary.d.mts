// Types of test-summary.mjs, for its test in tools/scripts-test.
export declare const REPORT: string;

export interface ReportCount {
  readonly passed: number;
  readonly failed: number;
  /** One line per failure that is not a failed test: a file that failed to load or set up, a run that failed. */
  readonly problems: readonly string[];
}

export interface ProjectCount extends ReportCount {
  readonly name: string;
}

export interface Summary {
  readonly passed: number;
  readonly failed: number;
  /** How many projects wrote a readable report. */
  readonly files: number;
  readonly projects: readonly ProjectCount[];
  /** One per test file that ran, from its report's `startTime` and `endTime`. */
  readonly durations: readonly FileDuration[];
}

export interface FileDuration {
  /** The project's directory, relative to the root (or an extra project's name). */
  readonly project: string;
  /** The file's last two path segments (`test/foo.test.ts`). */
  readonly file: string;
  readonly seconds: number;
}

export interface LoadAverageSummary {
  readonly samples: number;
  readonly min: number;
  readonly max: number;
  readonly mean: number;
}

export declare function testProjects(root: string): string[];
export declare function removeTestResults(root: string, extraReports?: readonly string[]): void;
export declare function countReport(report: unknown): ReportCount;
export declare function fileDurations(report: unknown): Array<{ file: string; seconds: number }>;
export declare function slowestFiles<T extends { readonly seconds: number }>(
  durations: readonly T[],
  count?: number,
): T[];
export declare function loadAverageSummary(samples: readonly number[]): LoadAverageSummary | undefined;
export declare function summarizeTestResults(
  root: string,
  extraProjects?: ReadonlyArray<{ readonly name: string; readonly report: string }>,
): Summary;
export declare function adoptMisplacedReport(options: {
  readonly sharedReport: string;
  readonly laneReport: string;
  readonly sharedBefore: Buffer | undefined;
}): boolean;

/** Clock ticks of CPU time, all cores: busy (not idle, not iowait) and in all. */
export interface CpuTimes {
  readonly busy: number;
  readonly total: number;
}

export declare function readCpuTimes(path?: string): CpuTimes | undefined;
export declare function parseCpuTimes(text: string): CpuTimes | undefined;
export declare function cpuBusyFraction(before: CpuTimes | undefined, after: CpuTimes | undefined): number | undefined;
