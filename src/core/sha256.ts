// SHA-256 hex digests, synchronous and browser-safe (crypto.subtle is async and missing outside secure
// contexts), from @noble/hashes. Matches node:crypto's createHash('sha256') hex digest.
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';

/** The sha256 of `data` (strings as UTF-8) as 64 lowercase hex chars. */
export function sha256Hex(data: string | Uint8Array): string {
  return bytesToHex(sha256(typeof data === 'string' ? utf8ToBytes(data) : data));
}
