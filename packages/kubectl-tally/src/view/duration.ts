const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const YEAR = 365 * DAY;

/**
 * A duration the way kubectl prints an AGE: `45s`, `3m12s` below ten minutes, `25m`, `5h3m` below ten hours, `17h`,
 * `3d4h` below ten days, `36d`, `2y30d`; two units at most, so a column stays narrow. Negative durations (a clock
 * ahead of the API server's) show as `0s`.
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '<unknown>';
  const t = Math.max(0, Math.floor(ms));
  if (t < MINUTE) return `${Math.floor(t / SECOND)}s`;
  if (t < 10 * MINUTE) return twoUnits(t, MINUTE, 'm', SECOND, 's');
  if (t < HOUR) return `${Math.floor(t / MINUTE)}m`;
  if (t < 10 * HOUR) return twoUnits(t, HOUR, 'h', MINUTE, 'm');
  if (t < DAY) return `${Math.floor(t / HOUR)}h`;
  if (t < 10 * DAY) return twoUnits(t, DAY, 'd', HOUR, 'h');
  if (t < YEAR) return `${Math.floor(t / DAY)}d`;
  return twoUnits(t, YEAR, 'y', DAY, 'd');
}

function twoUnits(t: number, big: number, bigName: string, small: number, smallName: string): string {
  const rest = Math.floor((t % big) / small);
  return rest === 0 ? `${Math.floor(t / big)}${bigName}` : `${Math.floor(t / big)}${bigName}${rest}${smallName}`;
}

/** The age of a timestamp at `nowMs`, or `<unknown>` when it is absent or unreadable. */
export function ageOf(timestamp: string | undefined, nowMs: number): string {
  if (timestamp === undefined) return '<unknown>';
  const at = Date.parse(timestamp);
  return Number.isNaN(at) ? '<unknown>' : formatDuration(nowMs - at);
}

/**
 * Parses a window such as `30m`, `2h`, `1d`, `90s` (one unit) into milliseconds, or undefined when it is not one.
 * Bounded to one second .. 366 days: a longer window says nothing about the recent rate.
 */
/** A minimum age: a duration as `parseWindow` reads it, or zero (`0s`, `0m`…: every age). */
export function parseMinAge(text: string): number | undefined {
  return /^0(s|m|h|d)$/.test(text) ? 0 : parseWindow(text);
}

export function parseWindow(text: string): number | undefined {
  const match = /^([1-9][0-9]{0,5})(s|m|h|d)$/.exec(text);
  if (!match) return undefined;
  const unit = { s: SECOND, m: MINUTE, h: HOUR, d: DAY }[match[2] as 's' | 'm' | 'h' | 'd'];
  const ms = Number(match[1]) * unit;
  return ms <= 366 * DAY ? ms : undefined;
}
