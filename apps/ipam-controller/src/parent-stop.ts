/**
 * The stop request of `npm start`: `scripts/tally.mjs start` runs this app as its child with an IPC channel and, when
 * it is sent SIGINT or SIGTERM itself (`kill <pid of npm>`, which npm passes on to it), asks the app to stop over
 * that channel rather than with a signal. A signal would be counted: the same Ctrl-C also reaches this process
 * directly (the terminal signals the whole process group), and two signals make the second one's exit 1 at once, an
 * unclean stop. The message shape is repeated in scripts/tally.mjs, which cannot import TypeScript sources.
 */

/** `type` of the message scripts/tally.mjs sends. */
export const PARENT_STOP_MESSAGE_TYPE = 'tally-ipam/stop';

interface ParentStopMessage {
  readonly type: typeof PARENT_STOP_MESSAGE_TYPE;
  /** The signal the parent received. */
  readonly signal: string;
}

function isParentStopMessage(message: unknown): message is ParentStopMessage {
  return (
    typeof message === 'object' &&
    message !== null &&
    (message as { type?: unknown }).type === PARENT_STOP_MESSAGE_TYPE &&
    typeof (message as { signal?: unknown }).signal === 'string'
  );
}

/**
 * Aborts when the parent process asks for a stop over IPC; undefined when there is no IPC channel (a Pod, a plain
 * `node dist/main.js`), so that the app stops on signals alone, as it always has.
 */
export function parentStopRequest(): AbortSignal | undefined {
  if (process.send === undefined) return undefined;
  const stop = new AbortController();
  process.on('message', (message: unknown) => {
    if (!isParentStopMessage(message) || stop.signal.aborted) return;
    stop.abort(new Error(`the parent process (npm start) received ${message.signal.slice(0, 32)}`));
  });
  // A 'message' listener keeps the process alive through the channel; the app's lifetime is its own (main exits).
  process.channel?.unref();
  return stop.signal;
}
