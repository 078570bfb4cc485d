import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { type ControllerProcess, startController } from './controller-process.js';

/** The claim controller's name in the logs and metrics (`setupIPAMProvider`). */
const CLAIM_CONTROLLER = 'tally-ipaddressclaim';

/** What a replica's log says it has done since its last start. */
export interface ReplicaProgress {
  /** Its claim controller's caches synced and its workers started. */
  readonly synced: boolean;
  /** Addresses it allocated. */
  readonly allocations: number;
}

/** One replica of the controller: restarted in place after each kill, its progress read from its own log. */
export class ChaosReplica {
  kills = 0;
  /** Allocations over every life of this replica, the current one included. */
  private earlierAllocations = 0;
  private current: ControllerProcess | undefined;
  private scanned = 0;
  private progressNow: ReplicaProgress = { synced: false, allocations: 0 };
  private metricsPort: number | undefined;
  private lives = 0;

  /**
   * `args` must log at info level: progress is read from the claim controller's own log lines. With `logDir`, each
   * life's stdout and stderr are also written there (`<name>-<life>-<pid>.log`), for reading a run afterwards.
   */
  constructor(
    readonly name: string,
    private readonly args: readonly string[],
    private readonly logDir?: string | undefined,
  ) {}

  get process(): ControllerProcess | undefined {
    return this.current;
  }

  start(): void {
    this.earlierAllocations += this.progress().allocations;
    this.current = startController(this.args);
    this.lives += 1;
    if (this.logDir)
      this.copyOutput(this.current, join(this.logDir, `${this.name}-${this.lives}-${this.current.pid}.log`));
    this.scanned = 0;
    this.progressNow = { synced: false, allocations: 0 };
    this.metricsPort = undefined;
  }

  async kill(): Promise<void> {
    await this.current?.stop('SIGKILL');
    this.kills += 1;
  }

  /** Since the last start; reads the log lines added since the previous call. */
  progress(): ReplicaProgress {
    const lines = this.current?.lines ?? [];
    let { synced, allocations } = this.progressNow;
    for (; this.scanned < lines.length; this.scanned += 1) {
      const line = lines[this.scanned] as string;
      // Only the claim controller's lines and the metrics server's matter; the rest is not parsed.
      if (!line.includes(CLAIM_CONTROLLER) && !line.includes('serving metrics')) continue;
      const record = parseRecord(line);
      if (record?.controller !== CLAIM_CONTROLLER) {
        if (record?.msg === 'serving metrics' && typeof record.address === 'string') {
          this.metricsPort = Number(record.address.split(':').pop());
        }
        continue;
      }
      if (record.msg === 'starting workers') synced = true;
      else if (record.msg === 'address allocated') allocations += 1;
    }
    this.progressNow = { synced, allocations };
    return this.progressNow;
  }

  /** Synced and allocated since its last start: a kill now lands in the middle of real work. */
  working(): boolean {
    const progress = this.progress();
    return progress.synced && progress.allocations > 0;
  }

  totalAllocations(): number {
    return this.earlierAllocations + this.progress().allocations;
  }

  /**
   * What the replica says of itself when the claims stop progressing: alive or not, synced, what its claim queue holds
   * (a queue with work is a slow replica, an empty one with claims left unbound is lost work), its warnings and errors.
   */
  async describe(): Promise<string> {
    const life = this.current;
    const progress = this.progress();
    const head =
      `replica ${this.name} (pid ${life?.pid}, exit ${life?.child.exitCode ?? 'none'}, ${this.kills} kills): ` +
      `synced ${progress.synced}, ${progress.allocations} allocations since its start, ${this.totalAllocations()} in all`;
    const lines = life?.lines ?? [];
    const notable = lines.filter((line) => !line.includes('"level":"info"')).slice(-10);
    return [
      head,
      await this.claimQueueMetrics(),
      ...(notable.length > 0 ? ['its last warnings and errors:', ...notable] : ['no warning or error logged']),
      'its last lines:',
      ...lines.slice(-5),
      (life?.stderr() ?? '').slice(-2_000),
    ].join('\n');
  }

  private copyOutput(life: ControllerProcess, path: string): void {
    const file = createWriteStream(path);
    life.child.stdout?.on('data', (chunk: string) => file.write(chunk));
    life.child.stderr?.on('data', (chunk: string) => file.write(chunk));
    life.child.once('exit', (code, signal) => file.end(`exited: code ${code}, signal ${signal}\n`));
  }

  private async claimQueueMetrics(): Promise<string> {
    if (this.metricsPort === undefined || this.current?.child.exitCode !== null) return 'no metrics (not serving)';
    try {
      const response = await fetch(`http://127.0.0.1:${this.metricsPort}/metrics`, {
        signal: AbortSignal.timeout(10_000),
      });
      const text = await response.text();
      const wanted =
        /^(workqueue_depth|workqueue_retries_total|controller_runtime_active_workers|controller_runtime_reconcile_total)\{/;
      const series = text.split('\n').filter((line) => wanted.test(line) && line.includes(`"${CLAIM_CONTROLLER}"`));
      return `claim controller metrics: ${series.join('; ')}`;
    } catch (error) {
      return `metrics unreadable: ${error instanceof Error ? error.message : String(error)}`;
    }
  }
}

/** A pino JSON line's fields that matter here; undefined for any other line. */
function parseRecord(line: string): { msg?: unknown; controller?: unknown; address?: unknown } | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    return JSON.parse(line) as { msg?: unknown; controller?: unknown; address?: unknown };
  } catch {
    return undefined;
  }
}
