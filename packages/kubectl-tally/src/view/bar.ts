/** The width of the utilisation bar between its brackets, in characters. */
export const BAR_WIDTH = 10;

/**
 * A pool's utilisation as `[####......]  40%`: `#` for the used share (rounded down, so a bar is full only when
 * nothing is free), `.` for the rest, and the percentage rounded down (99.6 % used is not 100 %). ASCII on purpose:
 * the plugin's output lands in logs and terminals whose encoding nobody controls. An empty pool (total 0) shows no
 * share at all.
 */
export function utilisationBar(used: number, total: number, width: number = BAR_WIDTH): string {
  if (!(total > 0) || !Number.isFinite(total) || !Number.isFinite(used)) return `[${'.'.repeat(width)}]    -`;
  const share = Math.min(1, Math.max(0, used / total));
  const filled = Math.floor(share * width);
  const percent = Math.floor(share * 100);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${`${percent}%`.padStart(4)}`;
}
