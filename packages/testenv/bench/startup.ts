// Measures how long a warm start takes (binaries cached): `pnpm --filter @tally-ipam/testenv bench`.
// Prints one line per run and a summary; figures for the README, not assertions.
import { performance } from 'node:perf_hooks';
import { ensureBinaries } from '../src/binaries.js';
import { startControlPlane } from '../src/control-plane.js';
import { formatBytes, formatDuration } from '../src/format.js';

const runs = Number(process.argv[2] ?? 5);
const binaries = await ensureBinaries({ onProgress: (message) => console.error(message) });
console.log(
  `binaries ${binaries.dir}: ${Object.entries(binaries.sizes)
    .map(([name, size]) => `${name} ${formatBytes(size)}`)
    .join(', ')}; built in ${formatDuration(binaries.buildDurationMs)}`,
);

const ready: number[] = [];
const withControllerManager: number[] = [];
const stops: number[] = [];
for (let run = 1; run <= runs; run++) {
  const started = performance.now();
  const plane = await startControlPlane({ controllerManager: true, ignoreTestKubeconfig: true });
  const total = performance.now() - started;
  const stopStarted = performance.now();
  await plane.stop();
  const stopped = performance.now() - stopStarted;
  ready.push(plane.startupDurationMs);
  withControllerManager.push(total);
  stops.push(stopped);
  console.log(
    `run ${run}: API server ready ${formatDuration(plane.startupDurationMs)}, with kube-controller-manager ` +
      `${formatDuration(total)}, stop ${formatDuration(stopped)}`,
  );
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
console.log(
  `median of ${runs}: API server ready ${formatDuration(median(ready))}, with kube-controller-manager ` +
    `${formatDuration(median(withControllerManager))}, stop ${formatDuration(median(stops))}; ` +
    `max ready ${formatDuration(Math.max(...ready))}`,
);
