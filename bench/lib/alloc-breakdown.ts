/**
 * Bytes allocated per request by function, from a V8 sampling heap profile taken with the
 * freed objects kept (heap-sampler.ts): each node's self size is charged to its function
 * (name, file and line), summed over every call path, and divided by the requests served
 * while it sampled. "(V8 API)" is what native code allocated outside any JavaScript frame
 * (here: uWS's request and response objects and each body chunk's ArrayBuffer); a native
 * call made *from* JavaScript (uWS's header pass, Buffer.from) counts in its caller.
 */
export interface HeapCallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

export interface HeapProfileNode {
  callFrame: HeapCallFrame;
  selfSize: number;
  children: HeapProfileNode[];
}

export interface AllocationRow {
  /** `name file:line`, the file as its last two path segments. */
  site: string;
  bytesPerRequest: number;
}

export function siteOf(f: HeapCallFrame): string {
  const file = f.url === '' ? '' : ` ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`;
  return `${f.functionName === '' ? '(anonymous)' : f.functionName}${file}`;
}

/** Every site's bytes per request, largest first, and their total. */
export function allocationsBySite(head: HeapProfileNode, requests: number): { total: number; rows: AllocationRow[] } {
  const bytes = new Map<string, number>();
  const stack: HeapProfileNode[] = [head];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.selfSize > 0) {
      const site = siteOf(n.callFrame);
      bytes.set(site, (bytes.get(site) ?? 0) + n.selfSize);
    }
    for (const c of n.children) stack.push(c);
  }
  let total = 0;
  const rows: AllocationRow[] = [];
  for (const [site, b] of bytes) {
    total += b;
    rows.push({ site, bytesPerRequest: b / requests });
  }
  rows.sort((a, b) => b.bytesPerRequest - a.bytesPerRequest);
  return { total: total / requests, rows };
}
