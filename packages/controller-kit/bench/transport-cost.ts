/**
 * CPU of this process per request through `KubeTransport`, printed as a ratio to a bare keep-alive `https.request`
 * with the same TLS context and token-free client certificate (the floor Node's HTTP client sets), against a real
 * control plane of its own. Ten requests in flight at a time, the ways alternating round by round.
 * Run: `pnpm --filter @tally-ipam/controller-kit exec node --import tsx bench/transport-cost.ts`. Asserts nothing.
 *
 *   TRANSPORT_ROUNDS    rounds per way (default 12; the first is a warm-up and is not counted)
 *   TRANSPORT_REQUESTS  requests per round (default 3000)
 */
import https from 'node:https';
import { createSecureContext, type SecureContext } from 'node:tls';
import type { KubeConfig } from '@kubernetes/client-node';
import { startControlPlane } from '@tally-ipam/testenv';
import { KubeTransport } from '../src/client/transport.js';

const ROUNDS = Number(process.env.TRANSPORT_ROUNDS ?? 12);
const REQUESTS = Number(process.env.TRANSPORT_REQUESTS ?? 3_000);
const IN_FLIGHT = 10;
const PATH = '/api/v1/namespaces/default';

type Send = () => Promise<unknown>;

async function bareHttps(kc: KubeConfig): Promise<{ send: Send; close: () => void }> {
  const options: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(options);
  const server = new URL(kc.getCurrentCluster()?.server ?? '');
  const agent = new https.Agent({ keepAlive: true, maxSockets: 64 });
  const secureContext = createSecureContext({ ca: options.ca, cert: options.cert, key: options.key });
  // `secureContext` is a TLS connect option that Node's https.request passes on, though its types leave it out.
  const requestOptions: https.RequestOptions & { secureContext: SecureContext } = {
    hostname: server.hostname,
    port: server.port,
    path: PATH,
    method: 'GET',
    headers: { Accept: 'application/json' },
    agent,
    secureContext,
  };
  const send: Send = () =>
    new Promise((resolve, reject) => {
      const req = https.request(requestOptions, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
  return { send, close: () => agent.destroy() };
}

function viaTransport(kc: KubeConfig): { send: Send; close: () => void } {
  const transport = new KubeTransport(kc);
  return { send: () => transport.request({ method: 'GET', path: PATH }), close: () => transport.close() };
}

async function cpuPerRequest(send: Send): Promise<number> {
  await send();
  const start = process.cpuUsage();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      for (let index = 0; index < REQUESTS / IN_FLIGHT; index += 1) await send();
    }),
  );
  const used = process.cpuUsage(start);
  return (used.user + used.system) / REQUESTS;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

const plane = await startControlPlane({ ignoreTestKubeconfig: true });
try {
  const kc = plane.kubeConfig();
  const ways = { 'bare https.request (floor)': () => bareHttps(kc), KubeTransport: async () => viaTransport(kc) };
  const results = new Map<string, number[]>(Object.keys(ways).map((name) => [name, []]));
  for (let round = 0; round < ROUNDS; round += 1) {
    const order = round % 2 === 0 ? Object.entries(ways) : Object.entries(ways).reverse();
    for (const [name, open] of order) {
      const way = await open();
      try {
        const micros = await cpuPerRequest(way.send);
        if (round > 0) results.get(name)?.push(micros);
      } finally {
        way.close();
      }
    }
  }
  const floor = median(results.get('bare https.request (floor)') ?? []);
  console.log(`node ${process.version}: medians over ${ROUNDS - 1} rounds of ${REQUESTS} GETs, ${IN_FLIGHT} in flight`);
  for (const [name, values] of results) {
    const value = median(values);
    console.log(
      `  ${name.padEnd(28)} ${value.toFixed(0)} µs CPU per request (${(value / floor).toFixed(2)}× the floor)`,
    );
  }
} finally {
  await plane.stop();
}
