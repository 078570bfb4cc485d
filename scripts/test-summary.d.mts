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
}

export declare function testProjects(root: string): string[];
export declare function removeTestResults(root: string, extraReports?: readonly string[]): void;
export declare function countReport(report: unknown): ReportCount;
export declare function summarizeTestResults(
  root: string,
  extraProjects?: ReadonlyArray<{ readonly name: string; readonly report: string }>,
): Summary;
export declare function adoptMisplacedReport(options: {
  readonly sharedReport: string;
  readonly laneReport: string;
  readonly sharedBefore: Buffer | undefined;
}): boolean;
