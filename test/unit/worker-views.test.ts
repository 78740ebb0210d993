/**
 * The pool thread's cache of typed views over the tables' segments (src/engine/worker/views.ts):
 * one set of views per tables id while the tables keep their segments, all of them made again
 * when the tables grow a segment, none kept after forgetViews.
 */
import { describe, expect, it } from 'vitest';
import { forgetViews, viewsFor } from '../../src/engine/worker/views.js';
import { RULES_PER_SEGMENT } from '../../src/shm/layout.js';
import { SharedTables } from '../../src/shm/tables.js';

describe('worker views', () => {
  it('keeps the views of unchanged tables, covers a new segment, and forgets on request', () => {
    const tables = new SharedTables();
    tables.allocRule(0.9, false);
    const first = viewsFor(7, structuredClone(tables.segments()));
    expect(viewsFor(7, structuredClone(tables.segments()))).toBe(first);
    expect(first.rules).toHaveLength(1);

    for (let i = 0; i < RULES_PER_SEGMENT; i++) tables.allocRule(0.9, false);
    const segments = tables.segments();
    expect(segments.rules.length).toBe(2);
    const grown = viewsFor(7, segments);
    expect(grown.rules).toHaveLength(2);
    expect(grown.windows).toHaveLength(segments.windows.length);
    grown.rules.forEach((views, i) => expect(views.ruleI32.buffer).toBe(segments.rules[i]));
    expect(viewsFor(7, segments)).toBe(grown);

    forgetViews(7);
    expect(viewsFor(7, segments)).not.toBe(grown);
    forgetViews(7);
  });
});
