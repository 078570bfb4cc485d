import { z } from 'zod';

/** A list response, validated as far as the reflector reads it; items are parsed one by one later. */
export const listEnvelopeSchema = z.looseObject({
  metadata: z.looseObject({
    resourceVersion: z.string().optional(),
    continue: z.string().optional(),
  }),
  items: z.array(z.unknown()).nullable(),
});

export const watchEventSchema = z.looseObject({
  type: z.enum(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']),
  object: z.unknown(),
});

export type WatchEvent = z.infer<typeof watchEventSchema>;

/** The `metav1.Status` inside an `ERROR` watch event. */
export const watchErrorStatusSchema = z.looseObject({
  code: z.number().optional(),
  reason: z.string().optional(),
  message: z.string().optional(),
});

/** A bookmark carries `metadata.resourceVersion`, and the end of a watch-list's initial events an annotation. */
export const bookmarkSchema = z.looseObject({
  metadata: z.looseObject({
    resourceVersion: z.string(),
    annotations: z.record(z.string(), z.string()).optional(),
  }),
});
