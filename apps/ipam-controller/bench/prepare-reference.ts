// Builds (or finds in the cache) the reference IPAM provider the benchmark and its harness test run, so that the Go
// build happens in npm test's prepare stage with progress, never inside a test's timeout.
import { ensureReferenceProvider } from './reference-provider.js';

const binary = await ensureReferenceProvider({ onProgress: (line) => console.error(`[reference provider] ${line}`) });
console.error(`[reference provider] ${binary.path}`);
