/**
 * The msgpack encoding of a byte string (the "bin" family: a 2, 3 or 5 byte header, then the
 * bytes), byte for byte what msgpackr's pack() makes of a Uint8Array or Buffer. A store that
 * keeps values as msgpack can write a byte-string value in this form without its general
 * encoder, and read it back with its usual decoder (see CollectionOptions.bytes).
 */
export function msgpackBin(bytes: Uint8Array): Buffer {
  const n = bytes.length;
  const head = n < 0x100 ? 2 : n < 0x10000 ? 3 : 5;
  const out = Buffer.allocUnsafe(head + n);
  if (head === 2) {
    out[0] = 0xc4;
    out[1] = n;
  } else if (head === 3) {
    out[0] = 0xc5;
    out.writeUInt16BE(n, 1);
  } else {
    out[0] = 0xc6;
    out.writeUInt32BE(n, 1);
  }
  out.set(bytes, head);
  return out;
}
