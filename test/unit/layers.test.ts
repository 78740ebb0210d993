/**
 * The import rule of CONTRIBUTING.md: no import cycle under src/, no import from a lower
 * layer into a higher one (scripts/check-layers.mjs holds the layer order). The checker itself
 * is tried on a small tree with one of each fault, so a checker that finds nothing fails too.
 * The pure layers (shm/, tiers/) also import no package or Node built-in (one listed exception).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain JavaScript module without type declarations
import { checkLayers } from '../../scripts/check-layers.mjs';

const check = checkLayers as (root?: string) => string[];

describe('imports under src/', () => {
  it('have no cycle and never go from a lower layer to a higher one', () => {
    expect(check()).toEqual([]);
  });
});

describe('the import checker', () => {
  const root = mkdtempSync(join(tmpdir(), 'layers-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const file = (path: string, text: string): void => {
    mkdirSync(dirname(join(root, 'src', path)), { recursive: true });
    writeFileSync(join(root, 'src', path), text);
  };
  file('shm/layout.ts', "export const A = 1;\n");
  file('shm/up.ts', "import type { Stage } from '../tiers/stage.js';\nexport type S = Stage;\n");
  file('tiers/stage.ts', "import { A } from '../shm/layout.js';\nexport type Stage = typeof A;\n");
  file('tiers/io.ts', "import { readFileSync } from 'node:fs';\nexport const r = readFileSync;\n");
  file('engine/a.ts', "import { b } from './b.js';\nexport const a = () => b;\n");
  file('engine/b.ts', "export { a as b } from './a.js';\n");
  file('http/x.ts', "const m = await import('../engine/a.js');\nexport default m;\n");
  file('nowhere.ts', "export {};\n");

  it('reports an upward import (type-only included), a cycle, a file in no layer and I/O in a pure layer', () => {
    const problems = check(root);
    expect(problems).toContain('src/tiers/io.ts (tiers, pure) imports "node:fs"');
    expect(problems).toContain('src/shm/up.ts (shm) imports src/tiers/stage.ts (tiers, a higher layer)');
    expect(problems.some((p) => p.startsWith('import cycle:') && p.includes('src/engine/a.ts') && p.includes('src/engine/b.ts'))).toBe(true);
    expect(problems.some((p) => p.startsWith('src/nowhere.ts: in no layer'))).toBe(true);
    // Downward imports (tiers → shm, http → engine through a dynamic import) are fine.
    expect(problems.filter((p) => p.startsWith('src/tiers/stage.ts') || p.startsWith('src/http/'))).toEqual([]);
    expect(problems).toHaveLength(4);
  });
});
