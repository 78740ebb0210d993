/**
 * Whether process `pid` is the one listening on TCP `port` (Linux: /proc/net/tcp and the
 * process's socket descriptors). A test server counts as ready only when it answers on its
 * port *and* holds that port: another process may have taken the port between the free-port
 * probe and the server's listen (another test file's server, another run on the machine), and
 * its answer would pass for ours while ours is still starting; the test's stop then signalled
 * a process that had not even begun to run its code (killed by the signal: a null exit code).
 * Null where /proc cannot tell (not Linux): the caller then goes by the answer alone.
 */
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';

const LISTEN = '0A';

function listeningInodes(port: number): Set<string> | null {
  if (!existsSync('/proc/net/tcp')) return null;
  const inodes = new Set<string>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || f[3] !== LISTEN) continue;
      if (parseInt(f[1].split(':')[1], 16) === port) inodes.add(f[9]);
    }
  }
  return inodes;
}

export function holdsPort(pid: number, port: number): boolean | null {
  const inodes = listeningInodes(port);
  if (inodes === null) return null;
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false; // gone
  }
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m && inodes.has(m[1])) return true;
    } catch {
      /* closed meanwhile */
    }
  }
  return false;
}
