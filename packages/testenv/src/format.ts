/** `93.4 s` or `12 min 5 s`: for progress lines and reports. */
export function formatDuration(milliseconds: number): string {
  const tenths = Math.round(milliseconds / 100);
  if (tenths < 600) return `${(tenths / 10).toFixed(1)} s`;
  // Rounded once, to whole seconds, before the split: 119.6 s is "2 min 0 s", never "1 min 60 s".
  const seconds = Math.round(milliseconds / 1000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

export function formatBytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
