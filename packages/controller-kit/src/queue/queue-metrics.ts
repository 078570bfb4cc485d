/**
 * What a work queue reports (client-go's `queueMetrics`): the hooks are called at the points client-go calls them,
 * and an implementation turns them into `workqueue_*` series.
 */
export interface QueueMetrics<T = string> {
  /** An item entered the dirty set (a real add, not a de-duplicated one). */
  added(item: T): void;
  /** A worker took the item. */
  taken(item: T): void;
  /** The worker finished the item. */
  finished(item: T): void;
  /** The item was re-added through the rate limiter. */
  retried(item: T): void;
}

export const noopQueueMetrics: QueueMetrics<never> = {
  added: () => {},
  taken: () => {},
  finished: () => {},
  retried: () => {},
};
