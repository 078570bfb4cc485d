/** Bytes as whole mebibytes, for the figures the lane prints. */
export function mebibytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
}
