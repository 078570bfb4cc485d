import { createPrivateKey, X509Certificate } from 'node:crypto';
import { type FSWatcher, watch } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Logger } from 'pino';
import type { CertWatcherMetrics } from './metrics.js';

/** A certificate chain and its key, read from disk and checked to belong together. */
export interface ServingCertificate {
  readonly certPem: string;
  readonly keyPem: string;
  /** Hex serial of the leaf certificate, for logs and for tests that check a rotation took effect. */
  readonly serialNumber: string;
  readonly notAfter: Date;
}

async function readPem(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new Error(`cannot read the webhook serving ${what} ${path}: ${detail}`, { cause: error });
  }
}

/**
 * Reads and checks the pair. Failing loudly on a key that does not match matters: OpenSSL silently drops a
 * mismatched key when building a context, and every handshake would then fail instead of the reload.
 */
export async function loadServingCertificate(certPath: string, keyPath: string): Promise<ServingCertificate> {
  // One after the other, so that when both are missing the error always names the certificate.
  const certPem = await readPem(certPath, 'certificate');
  const keyPem = await readPem(keyPath, 'key');
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(certPem);
  } catch (error) {
    throw new Error(`${certPath} does not hold a PEM certificate: ${String(error)}`, { cause: error });
  }
  let matches: boolean;
  try {
    matches = leaf.checkPrivateKey(createPrivateKey(keyPem));
  } catch (error) {
    throw new Error(`${keyPath} does not hold a PEM private key: ${String(error)}`, { cause: error });
  }
  if (!matches) throw new Error(`the private key ${keyPath} does not belong to the certificate ${certPath}`);
  return { certPem, keyPem, serialNumber: leaf.serialNumber, notAfter: new Date(leaf.validTo) };
}

export interface CertWatcherOptions {
  readonly certPath: string;
  readonly keyPath: string;
  /** How often the files are re-read in case a file-system event was missed; controller-runtime uses 10 s. */
  readonly pollIntervalMs: number;
  readonly logger: Logger;
  /** Called with every new, valid pair (not for the initial load). */
  readonly onChange: (certificate: ServingCertificate) => void;
  readonly metrics?: CertWatcherMetrics;
}

// File events come in bursts (cert-manager writes the certificate and the key separately; kubelet swaps a `..data`
// symlink); waiting a moment lets the burst settle before reading.
const WATCH_SETTLE_MS = 50;

/**
 * controller-runtime's `certwatcher`: keeps the serving certificate current while cert-manager rotates it. It watches
 * the directory, not the files, because Secret volumes replace files through a symlink swap that a file watch misses,
 * and it also re-reads on a timer because file events are not guaranteed (network file systems, overlay mounts).
 */
export class CertWatcher {
  private current: ServingCertificate | undefined;
  private reloading = false;
  private reloadAgain = false;
  private settleTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: CertWatcherOptions) {}

  get certificate(): ServingCertificate | undefined {
    return this.current;
  }

  /** Loads the pair (rejecting if it cannot) and keeps watching until `signal` aborts. */
  async start(signal: AbortSignal): Promise<ServingCertificate> {
    const { certPath, keyPath, pollIntervalMs, logger } = this.options;
    const initial = await this.read();
    this.current = initial;
    if (signal.aborted) return initial;

    const watchers = new Set([dirname(certPath), dirname(keyPath)]);
    const fileWatchers: FSWatcher[] = [];
    for (const directory of watchers) {
      try {
        const watcher = watch(directory, { persistent: false }, () => this.scheduleReload());
        watcher.on('error', (error) => {
          logger.warn({ err: error, directory }, 'certificate directory watch failed; relying on periodic checks');
          watcher.close();
        });
        fileWatchers.push(watcher);
      } catch (error) {
        logger.warn({ err: error, directory }, 'cannot watch the certificate directory; relying on periodic checks');
      }
    }
    const poll = setInterval(() => this.triggerReload(), pollIntervalMs);
    poll.unref();
    signal.addEventListener(
      'abort',
      () => {
        clearInterval(poll);
        clearTimeout(this.settleTimer);
        for (const watcher of fileWatchers) watcher.close();
      },
      { once: true },
    );
    logger.info(
      { certPath, keyPath, serialNumber: initial.serialNumber, notAfter: initial.notAfter.toISOString() },
      'loaded webhook serving certificate',
    );
    return initial;
  }

  private async read(): Promise<ServingCertificate> {
    this.options.metrics?.reads.inc();
    try {
      return await loadServingCertificate(this.options.certPath, this.options.keyPath);
    } catch (error) {
      this.options.metrics?.readErrors.inc();
      throw error;
    }
  }

  private scheduleReload(): void {
    clearTimeout(this.settleTimer);
    this.settleTimer = setTimeout(() => this.triggerReload(), WATCH_SETTLE_MS);
    this.settleTimer.unref();
  }

  /** Runs one reload at a time; a trigger during a reload runs one more afterwards so no change is lost. */
  private triggerReload(): void {
    if (this.reloading) {
      this.reloadAgain = true;
      return;
    }
    this.reloading = true;
    void this.reload().finally(() => {
      this.reloading = false;
      if (this.reloadAgain) {
        this.reloadAgain = false;
        this.triggerReload();
      }
    });
  }

  private async reload(): Promise<void> {
    const { certPath, keyPath, logger } = this.options;
    let next: ServingCertificate;
    try {
      next = await this.read();
    } catch (error) {
      // Mid-rotation the files can briefly disagree; the old certificate keeps serving until a valid pair appears.
      logger.warn({ err: error, certPath, keyPath }, 'keeping the current webhook serving certificate');
      return;
    }
    const previous = this.current;
    if (previous && previous.certPem === next.certPem && previous.keyPem === next.keyPem) return;
    try {
      this.options.onChange(next);
    } catch (error) {
      // `current` stays the old pair, so the next check tries again.
      logger.error({ err: error, serialNumber: next.serialNumber }, 'applying the new serving certificate failed');
      return;
    }
    this.current = next;
    logger.info(
      {
        certPath,
        previousSerialNumber: previous?.serialNumber,
        serialNumber: next.serialNumber,
        notAfter: next.notAfter.toISOString(),
      },
      'webhook serving certificate changed; new connections use it',
    );
  }
}
