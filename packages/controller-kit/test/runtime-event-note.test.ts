import { createTestNamespace, type TestNamespace } from '@tally-ipam/testenv';
import { testEnv } from '@tally-ipam/testenv/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../src/client/client.js';
import { EVENTS_RESOURCE, EventRecorder } from '../src/client/events.js';
import { CONFIG_MAPS, capturingLogger } from './fixtures/runtime-support.js';

/** events.k8s.io/v1 refuses a note over 1 KiB (with the whole Event): the recorder cuts it and marks the cut. */
const MAX_NOTE_BYTES = 1024;
const ELLIPSIS = '…';

let namespace: TestNamespace;
let client: Client;

beforeAll(async () => {
  namespace = await createTestNamespace(testEnv().kubeConfig, 'event-note');
  client = new Client(testEnv().kubeConfig, { fieldManager: 'runtime-test' });
});

afterAll(async () => {
  client?.close();
  await namespace?.delete();
});

async function recordedNote(objectName: string, note: string): Promise<string> {
  const { logger, lines } = capturingLogger();
  const recorder = new EventRecorder({ client, reportingController: 'runtime-test', reportingInstance: 'x', logger });
  const regarding = await client.create(CONFIG_MAPS, { metadata: { name: objectName, namespace: namespace.name } });
  await recorder.warning(regarding, 'Refused', 'Validate', note);
  const events = await client.list(EVENTS_RESOURCE, { namespace: namespace.name });
  const mine = events.items.filter((event) => event.metadata.name.startsWith(`${objectName}.`));
  expect(lines().filter((line) => line.msg === 'could not record event')).toEqual([]);
  expect(mine).toHaveLength(1);
  return String((mine[0] as unknown as { note: unknown }).note);
}

describe('EventRecorder notes over the API limit', () => {
  it('records a 64 KiB note cut to at most 1024 bytes, the cut marked with an ellipsis', async () => {
    // Two- and three-byte characters, so a cut on a byte count lands inside a character unless it is careful.
    const note = `pool spec refused: ${'é€x'.repeat(64 * 1024)}`.slice(0, 64 * 1024);
    const stored = await recordedNote('long-note', note);
    expect(Buffer.byteLength(stored, 'utf8')).toBeLessThanOrEqual(MAX_NOTE_BYTES);
    expect(Buffer.byteLength(stored, 'utf8')).toBeGreaterThan(MAX_NOTE_BYTES - 4);
    expect(stored.endsWith(ELLIPSIS)).toBe(true);
    expect(note.startsWith(stored.slice(0, -ELLIPSIS.length))).toBe(true);
    expect(stored).not.toContain('\uFFFD');
  });

  it('keeps a note of exactly 1024 bytes as it is', async () => {
    const note = 'n'.repeat(MAX_NOTE_BYTES);
    expect(await recordedNote('full-note', note)).toBe(note);
  });
});
