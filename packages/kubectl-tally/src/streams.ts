/** Where a run writes: stdout for results, stderr for errors and notes. */
export interface Streams {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}
